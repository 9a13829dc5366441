// Textures in kernels: 2D textures with mip chains, sampled with bilinear, trilinear or footprint-selected
// filtering and repeat, clamp-to-edge or mirrored-repeat wrapping; inside $autodiff a sample is
// differentiable with respect to the texels (a differentiable buffer) and the texture coordinates.
#pragma once
#include <adjoint/dsl/autodiff.h>
#include <adjoint/dsl/kernel.h>

#include <vector>

namespace adjoint {

// How coordinates outside [0, 1) map onto the texture. Clamp is clamp-to-edge. RepeatClamp repeats u and clamps
// v: an equirectangular map, whose columns wrap around the vertical axis and whose rows end at the poles.
enum class TextureWrap : uint32_t { Repeat = 0, Clamp = 1, Mirror = 2, RepeatClamp = 3 };

namespace detail {

// A texture (set) is two kernel parameters: its texels, a diff_buffer<float> holding every level of every
// texture (rows of `width` texels, `channels` floats each; level after level, texture after texture), and
// its table, a buffer<uint4>:
//   [0]          {number of textures, 0, 0, 0}
//   [1 + i]      texture i: {record of its level 0, levels, wrap, 0}
//   [first + l]  level l: {offset of its first float in the texels, width, height, 0}
template <typename T>
constexpr uint32_t texel_channels = std::is_same_v<T, float> ? 1 : std::is_same_v<T, float2> ? 2
                                    : std::is_same_v<T, float3> ? 3 : 4;
template <typename T>
constexpr bool is_texel_v = std::is_same_v<T, float> || std::is_same_v<T, float2> || std::is_same_v<T, float3> ||
                            std::is_same_v<T, float4>;
template <typename T>
constexpr const char* texture_kind = std::is_same_v<T, float>    ? "texture<float>"
                                     : std::is_same_v<T, float2> ? "texture<float2>"
                                     : std::is_same_v<T, float3> ? "texture<float3>" : "texture<float4>";
template <typename T>
constexpr const char* texture_set_kind = std::is_same_v<T, float> ? "texture_set<float>"
                                         : std::is_same_v<T, float2> ? "texture_set<float2>"
                                         : std::is_same_v<T, float3> ? "texture_set<float3>" : "texture_set<float4>";

// The texel whose first float is at `at`, from a buffer of floats (plain or differentiable).
template <typename T, typename B>
Expr<T> read_texel(const B& buf, const Expr<uint32_t>& at, const std::source_location& loc) {
    if constexpr (std::is_same_v<T, float>) return buf.read(at, loc);
    else if constexpr (std::is_same_v<T, float2>) return make_float2(buf.read(at, loc), buf.read(at + 1u, loc), loc);
    else if constexpr (std::is_same_v<T, float3>)
        return make_float3(buf.read(at, loc), buf.read(at + 1u, loc), buf.read(at + 2u, loc), loc);
    else
        return make_float4(buf.read(at, loc), buf.read(at + 1u, loc), buf.read(at + 2u, loc), buf.read(at + 3u, loc),
                           loc);
}

// Where the texel at (x, y) of the level whose record is `lv` (first float, width, height) starts: TextureRef's
// taps, held or not, and TextureLevelRef's reads address it alike.
template <typename T>
Expr<uint32_t> texel_address(const Expr<uint4>& lv, const Expr<uint32_t>& x, const Expr<uint32_t>& y) {
    return lv.x + (y * lv.y + x) * texel_channels<T>;
}

// The texel at (x, y) of the level whose record is `lv`; a detached texture's texels are constants.
template <typename T, typename B>
Expr<T> level_texel(const B& buf, const Expr<uint4>& lv, const Expr<uint32_t>& x, const Expr<uint32_t>& y,
                    bool detached, const std::source_location& loc) {
    Expr<T> v = read_texel<T>(buf, texel_address<T>(lv, x, y), loc);
    return detached ? call_op<T>(ir::Op::Detach, loc, v) : v;
}

template <typename T>
Expr<T> splat(const Expr<float>& x, const std::source_location& loc) {
    if constexpr (std::is_same_v<T, float>) return x;
    else if constexpr (std::is_same_v<T, float2>) return make_float2(x, loc);
    else if constexpr (std::is_same_v<T, float3>) return make_float3(x, loc);
    else return make_float4(x, loc);
}

// An int or uint DSL value (or a C++ integer) as uint / int: coordinates, levels and indices take either.
template <typename To, typename X>
Expr<To> as_integer(const X& x, const std::source_location& loc) {
    auto e = lift<To>(x);
    using V = typename decltype(e)::value_type;
    static_assert(std::is_same_v<V, int32_t> || std::is_same_v<V, uint32_t>, "expected an int or a uint");
    if constexpr (std::is_same_v<V, To>) return e;
    else return cast<To>(e, loc);
}

// x mod n in [0, n) for any int x (GLSL's % is undefined for negative operands).
inline Expr<uint2> wrap_mod(const Expr<int2>& x, const Expr<uint2>& n, const std::source_location& loc) {
    Expr<bool2> negative = x < make_int2(0, loc);
    Expr<uint2> a = cast<uint32_t>(ite(negative, -(x + 1), x, loc), loc) % n;   // -(x + 1) cannot overflow
    return ite(negative, n - 1u - a, a, loc);
}

// Integer texel coordinates (any int, NaN casts included) wrapped into [0, n) by the wrap mode.
inline Expr<uint2> wrap_texel(const Expr<int2>& x, const Expr<uint2>& n, const Expr<uint32_t>& wrap,
                              const std::source_location& loc) {
    Expr<bool> mirror = wrap == uint32_t(TextureWrap::Mirror);
    Expr<uint2> period = ite(mirror, n * 2u, n, loc);
    Expr<uint2> m = wrap_mod(x, period, loc);
    Expr<uint2> repeated = ite(m < n, m, period - 1u - m, loc);   // mirrored: the second half runs backwards
    Expr<uint2> clamped = cast<uint32_t>(adjoint::clamp(x, make_int2(0, loc), cast<int32_t>(n, loc) - 1, loc), loc);
    Expr<bool> clamp_x = wrap == uint32_t(TextureWrap::Clamp);
    Expr<bool> clamp_y = clamp_x | (wrap == uint32_t(TextureWrap::RepeatClamp));
    return make_uint2(ite(clamp_x, clamped.x, repeated.x, loc), ite(clamp_y, clamped.y, repeated.y, loc), loc);
}

// The same wrap for the two taps of bilinear filtering, whose coordinates lie in [-1, period] for finite
// texture coordinates (uv folded into one period first; the period is n, or 2n for mirror): one add or
// subtract instead of an integer division, which SIMD CPUs (lavapipe) do lane by lane. Equal to wrap_texel
// there; other values (NaN casts) are clamped into the level.
inline Expr<uint2> wrap_tap(const Expr<int2>& x, const Expr<uint2>& n, const Expr<uint32_t>& wrap,
                            const std::source_location& loc) {
    Expr<int2> ni = cast<int32_t>(n, loc);
    Expr<int2> period = ite(wrap == uint32_t(TextureWrap::Mirror), ni * 2, ni, loc);
    Expr<int2> m = ite(x < make_int2(0, loc), x + period, ite(x >= period, x - period, x, loc), loc);
    Expr<int2> repeated = ite(m < ni, m, period - 1 - m, loc);   // mirrored: the second half runs backwards
    Expr<bool> clamp_x = wrap == uint32_t(TextureWrap::Clamp);
    Expr<bool> clamp_y = clamp_x | (wrap == uint32_t(TextureWrap::RepeatClamp));
    Expr<int2> w = make_int2(ite(clamp_x, x.x, repeated.x, loc), ite(clamp_y, x.y, repeated.y, loc), loc);
    return cast<uint32_t>(adjoint::clamp(w, make_int2(0, loc), ni - 1, loc), loc);
}

} // namespace detail

// The address of a texel a held sample did not read (HeldTexels).
constexpr uint32_t kNoSlot = ~0u;

// Texel reads held for the caller (HeldValues, autodiff.h, with each read's address). A texture sampled through
// held(h) inside $autodiff reads each texel as a plain value into variable h.value(k), marked requires_grad, and
// keeps its address (its first float in the texels) in h.at(k), k counting the reads as they are recorded; a read
// that does not run (the second level of a trilinear sample whose fraction is 0) keeps kNoSlot. After backward
// grad(h.value(k)) is that read's gradient, for the caller to add where it likes (the app lists each pixel's taps
// once and gathers their gradients per texel), where each read would have added its adjoint by float atomics, a
// compare-and-swap each on lavapipe. Reads are taken as HeldValues takes values: at the holder's loop depth, within
// its capacity, or an error naming the read's line.
template <typename T>
class HeldTexels {
public:
    explicit HeldTexels(int capacity, std::source_location loc = std::source_location::current())
        : values_(capacity, "held texels", "a texel read", loc) {
        at_.reserve(size_t(capacity));   // reserved first: a Var copied on reallocation would be a new variable
        for (int k = 0; k < capacity; ++k) at_.emplace_back(kNoSlot);
    }
    HeldTexels(const HeldTexels&) = delete;
    HeldTexels& operator=(const HeldTexels&) = delete;

    int capacity() const { return values_.capacity(); }
    int used() const { return values_.used(); }
    const Var<uint32_t>& at(int k) const { return at_.at(size_t(k)); }
    const Var<T>& value(int k) const { return values_.value(k); }

    // Holds `texel`, read from where its first float is `at` (by TextureRef, or by a caller over its own texel
    // layout: the Python module's texture op): returns it as a plain value marked requires_grad, or detached
    // where it cannot be held.
    Expr<T> hold(const Expr<T>& texel, const Expr<uint32_t>& at,
                 const std::source_location& loc = std::source_location::current()) {
        const int k = values_.used();
        Expr<T> v = values_.hold(texel, loc);
        if (values_.used() > k) at_[size_t(k)] = at;
        return v;
    }

private:
    HeldValues<T> values_;
    std::vector<Var<uint32_t>> at_;
};

template <typename T>
class TextureLevelRef;

// One texture in a kernel (of a TextureVar, or texture(i) of a TextureSetVar). Texel centres sit at
// half-integers: texel (x, y) of a w x h level covers uv in [x / w, (x + 1) / w) x [y / h, (y + 1) / h); uv
// (0, 0) is the corner of the first texel in memory (row 0, column 0). Level l is max(1, w >> l) wide. Every
// read stays inside the texture, whatever the coordinates (NaN included).
template <typename T>
class TextureRef {
    static_assert(detail::is_texel_v<T>, "a texture holds float, float2, float3 or float4 texels");

public:
    static constexpr uint32_t channels = detail::texel_channels<T>;
    TextureRef(DiffBufferVar<float> texels, BufferVar<uint4> table, Expr<uint32_t> record)
        : texels_(texels), table_(table), record_(record) {}

    // The same texture with its texels read as constants: inside $autodiff a sample is then differentiated
    // with respect to the coordinates only and scatters nothing into the texels' gradient (for a texture that
    // is not being optimized: each sample's four or eight texel adjoints are atomics saved).
    TextureRef detached() const {
        TextureRef r = *this;
        r.detached_ = true;
        return r;
    }

    // The same texture with its texel reads held in `h` (HeldTexels): the caller adds their gradients. A detached
    // texture's reads stay constants.
    TextureRef held(HeldTexels<T>& h) const {
        TextureRef r = *this;
        r.held_ = &h;
        return r;
    }

    // The number of mip levels (1 without mipmaps).
    Expr<uint32_t> levels(std::source_location loc = std::source_location::current()) const { return header(loc).y; }

    // Level l's width and height (l is clamped to the levels there are).
    Expr<uint2> size(std::source_location loc = std::source_location::current()) const { return size(0u, loc); }
    template <typename L>
    Expr<uint2> size(const L& level, std::source_location loc = std::source_location::current()) const {
        auto lv = level_record(header(loc), detail::as_integer<uint32_t>(level, loc), loc);
        return make_uint2(lv.y, lv.z, loc);
    }

    // The texel at integer coordinates (int or uint), wrapped by the texture's wrap mode, of a level.
    template <typename X, typename Y>
    Var<T> read(const X& x, const Y& y, std::source_location loc = std::source_location::current()) const {
        return read(x, y, 0u, loc);
    }
    template <typename X, typename Y, typename L>
    Var<T> read(const X& x, const Y& y, const L& level,
                std::source_location loc = std::source_location::current()) const {
        auto h = header(loc);
        auto lv = level_record(h, detail::as_integer<uint32_t>(level, loc), loc);
        Expr<uint2> n = make_uint2(lv.y, lv.z, loc);
        Expr<int2> xy = make_int2(detail::as_integer<int32_t>(x, loc), detail::as_integer<int32_t>(y, loc), loc);
        Expr<uint2> p = detail::wrap_texel(xy, n, h.z, loc);
        return Var<T>(texel(lv, p.x, p.y, loc), loc);
    }

    // One level (clamped to the levels there are), its records read here, once: for a loop over the level's
    // texels (TextureLevelRef::read).
    template <typename L>
    TextureLevelRef<T> level(const L& level, std::source_location loc = std::source_location::current()) const {
        return TextureLevelRef<T>(texels_, level_record(header(loc), detail::as_integer<uint32_t>(level, loc), loc),
                                  detached_);
    }

    // Bilinear filtering of level 0.
    template <typename U>
    Var<T> sample(const U& uv, std::source_location loc = std::source_location::current()) const {
        auto h = header(loc);
        return bilinear(h, level_record(h, Expr<uint32_t>(0u, loc), loc), detail::lift<float2>(uv), loc);
    }

    // Trilinear filtering: levels floor(lod) and floor(lod) + 1 blended by the fraction; lod is clamped to
    // [0, levels - 1], and a whole lod reads one level only.
    template <typename U, typename L>
    Var<T> sample_level(const U& uv, const L& lod, std::source_location loc = std::source_location::current()) const {
        return trilinear(header(loc), detail::lift<float2>(uv), detail::lift<float>(lod), loc);
    }

    // Mipmapped filtering with the level of detail from the screen-space derivatives of uv (per pixel):
    // lod = log2 of the longer of the two footprints, measured in level-0 texels; magnified pixels (lod <= 0)
    // read level 0 alone.
    template <typename U, typename DX, typename DY>
    Var<T> sample_grad(const U& uv, const DX& duv_dx, const DY& duv_dy,
                       std::source_location loc = std::source_location::current()) const {
        auto h = header(loc);
        auto base = level_record(h, Expr<uint32_t>(0u, loc), loc);
        Expr<float2> size = make_float2(base.y, base.z, loc);
        Expr<float> rho = adjoint::max(length(detail::lift<float2>(duv_dx) * size, loc),
                                       length(detail::lift<float2>(duv_dy) * size, loc), loc);
        return trilinear(h, detail::lift<float2>(uv), log2(adjoint::max(rho, 1e-8f, loc), loc), loc);
    }

protected:
    DiffBufferVar<float> texels_;
    BufferVar<uint4> table_;

private:
    bool detached_ = false;
    HeldTexels<T>* held_ = nullptr;
    Expr<uint4> header(const std::source_location& loc) const {
        detail::Recorder::current(loc).at(loc);
        return table_.read(record_, loc);
    }
    Expr<uint4> level_record(const Expr<uint4>& h, const Expr<uint32_t>& level, const std::source_location& loc) const {
        return table_.read(h.x + adjoint::min(level, h.y - 1u, loc), loc);
    }
    Expr<T> texel(const Expr<uint4>& lv, const Expr<uint32_t>& x, const Expr<uint32_t>& y,
                  const std::source_location& loc) const {
        if (!held_ || detached_) return detail::level_texel<T>(texels_, lv, x, y, detached_, loc);
        const Expr<uint32_t> at = detail::texel_address<T>(lv, x, y);
        return held_->hold(detail::read_texel<T>(texels_, at, loc), at, loc);
    }
    Var<T> bilinear(const Expr<uint4>& h, const Expr<uint4>& lv, const Expr<float2>& uv,
                    const std::source_location& loc) const {
        using namespace detail;
        Expr<uint32_t> wrap = h.z;
        Expr<uint2> n = make_uint2(lv.y, lv.z, loc);
        Expr<float2> size = make_float2(lv.y, lv.z, loc);
        // Repeat and mirror fold uv into one period first (exact: the derivative of the fold is 1), which keeps
        // the integer coordinates small; clamp bounds texel space to one texel beyond the edges, where the
        // value no longer changes.
        Expr<float2> mirrored = ite(wrap == uint32_t(TextureWrap::Mirror), uv - floor(uv * 0.5f, loc) * 2.0f, uv, loc);
        Expr<float2> folded = ite(wrap == uint32_t(TextureWrap::Repeat), fract(uv, loc), mirrored, loc);
        Expr<bool> repeat_clamp = wrap == uint32_t(TextureWrap::RepeatClamp);
        folded = ite(repeat_clamp, make_float2(fract(uv.x, loc), uv.y, loc), folded, loc);
        Expr<float2> p0 = folded * size - 0.5f;
        Expr<float2> clamped = adjoint::clamp(p0, make_float2(-1.0f, loc), size, loc);
        Expr<float2> p = ite(wrap == uint32_t(TextureWrap::Clamp), clamped, p0, loc);
        p = ite(repeat_clamp, make_float2(p0.x, clamped.y, loc), p, loc);
        Expr<float2> f = floor(p, loc);
        Expr<float2> t = p - f;
        Expr<int2> i0 = cast<int32_t>(f, loc);
        Expr<uint2> a = wrap_tap(i0, n, wrap, loc), b = wrap_tap(i0 + 1, n, wrap, loc);
        Expr<T> tx = splat<T>(t.x, loc), ty = splat<T>(t.y, loc);
        Expr<T> top = lerp(texel(lv, a.x, a.y, loc), texel(lv, b.x, a.y, loc), tx, loc);
        Expr<T> bottom = lerp(texel(lv, a.x, b.y, loc), texel(lv, b.x, b.y, loc), tx, loc);
        return Var<T>(lerp(top, bottom, ty, loc), loc);
    }
    Var<T> trilinear(const Expr<uint4>& h, const Expr<float2>& uv, const Expr<float>& lod,
                     const std::source_location& loc) const {
        Expr<float> l = adjoint::clamp(lod, 0.0f, cast<float>(h.y - 1u, loc), loc);
        Expr<float> whole = floor(l, loc);
        Expr<float> frac = l - whole;
        Expr<uint32_t> l0 = cast<uint32_t>(whole, loc);
        Var<T> c = bilinear(h, level_record(h, l0, loc), uv, loc);
        detail::IfStmt(frac > 0.0f, loc) % [&] {
            Expr<T> c1 = bilinear(h, level_record(h, l0 + 1u, loc), uv, loc);
            c = lerp(Expr<T>(c), c1, detail::splat<T>(frac, loc), loc);
        };
        return c;
    }

    Expr<uint32_t> record_;   // the texture's record in the table
};

// One level of a texture (TextureRef::level), whose records were read once. read(x, y) clamps the coordinates
// into the level instead of wrapping them by the texture's wrap mode: for coordinates inside by construction (a
// loop over the level's texels), where TextureRef::read would read the texture's records at every call and wrap
// by an integer modulo, which SIMD CPUs compute lane by lane (2.3x the time of a prefilter's sum on lavapipe).
// Reads are differentiable as TextureRef's are (or constants, from a detached() texture).
template <typename T>
class TextureLevelRef {
public:
    TextureLevelRef(DiffBufferVar<float> texels, Expr<uint4> record, bool detached)
        : texels_(texels), record_(record), detached_(detached) {}
    Expr<uint2> size(std::source_location loc = std::source_location::current()) const {
        return make_uint2(record_.y, record_.z, loc);
    }
    template <typename X, typename Y>
    Var<T> read(const X& x, const Y& y, std::source_location loc = std::source_location::current()) const {
        detail::Recorder::current(loc).at(loc);
        Expr<int2> xy = make_int2(detail::as_integer<int32_t>(x, loc), detail::as_integer<int32_t>(y, loc), loc);
        Expr<int2> last = cast<int32_t>(make_uint2(record_.y, record_.z, loc), loc) - 1;
        Expr<uint2> p = cast<uint32_t>(adjoint::clamp(xy, make_int2(0, loc), last, loc), loc);
        return Var<T>(detail::level_texel<T>(texels_, record_, p.x, p.y, detached_, loc), loc);
    }

private:
    DiffBufferVar<float> texels_;
    Expr<uint4> record_;   // the level's: first float, width, height
    bool detached_;
};

// A kernel (or callable) parameter bound to a Texture2D<T> (host): one texture.
template <typename T>
class TextureVar : public TextureRef<T> {
public:
    TextureVar(DiffBufferVar<float> texels, BufferVar<uint4> table)
        : TextureRef<T>(texels, table, Expr<uint32_t>(1u)) {}
    std::array<ir::ValueId, 2> ids() const { return {this->texels_.id(), this->table_.id()}; }
};

// A kernel (or callable) parameter bound to a TextureSet<T> (host): several textures of any sizes, chosen by
// index in the kernel: set.texture(i).sample(uv). An index past the end reads the last texture.
template <typename T>
class TextureSetVar {
    static_assert(detail::is_texel_v<T>, "a texture holds float, float2, float3 or float4 texels");

public:
    TextureSetVar(DiffBufferVar<float> texels, BufferVar<uint4> table) : texels_(texels), table_(table) {}
    template <typename I>
    TextureRef<T> texture(const I& index, std::source_location loc = std::source_location::current()) const {
        detail::Recorder::current(loc).at(loc);
        Expr<uint32_t> i = adjoint::min(detail::as_integer<uint32_t>(index, loc), size(loc) - 1u, loc);
        return TextureRef<T>(texels_, table_, i + 1u);
    }
    // The number of textures.
    Expr<uint32_t> size(std::source_location loc = std::source_location::current()) const {
        return table_.read(0u, loc).x;
    }
    std::array<ir::ValueId, 2> ids() const { return {texels_.id(), table_.id()}; }

private:
    DiffBufferVar<float> texels_;
    BufferVar<uint4> table_;
};

using TextureFloat = TextureVar<float>;
using TextureFloat2 = TextureVar<float2>;
using TextureFloat3 = TextureVar<float3>;
using TextureFloat4 = TextureVar<float4>;
using TextureSetFloat = TextureSetVar<float>;
using TextureSetFloat2 = TextureSetVar<float2>;
using TextureSetFloat3 = TextureSetVar<float3>;
using TextureSetFloat4 = TextureSetVar<float4>;

namespace detail {
template <typename T>
struct ParamKind<TextureVar<T>> {
    using value = TextureVar<T>;
    static constexpr size_t count = 2;
    static constexpr const char* bundle = texture_kind<T>;
    static void types(std::vector<const ir::Type*>& out) {
        out.push_back(ir::Type::diff_buffer(type_of<float>()));
        out.push_back(ir::Type::buffer(type_of<uint4>()));
    }
    static TextureVar<T> make(const ir::ValueId* ids) {
        return TextureVar<T>(DiffBufferVar<float>(ids[0]), BufferVar<uint4>(ids[1]));
    }
};
template <typename T>
struct ParamKind<TextureSetVar<T>> {
    using value = TextureSetVar<T>;
    static constexpr size_t count = 2;
    static constexpr const char* bundle = texture_set_kind<T>;
    static void types(std::vector<const ir::Type*>& out) { ParamKind<TextureVar<T>>::types(out); }
    static TextureSetVar<T> make(const ir::ValueId* ids) {
        return TextureSetVar<T>(DiffBufferVar<float>(ids[0]), BufferVar<uint4>(ids[1]));
    }
};
} // namespace detail

} // namespace adjoint
