// Texture sets on the host: the layout and level table, copies, and the mip kernels (a 2x2 box filter, and
// for the gradients its reverse gathered along each level-0 texel's chain), compiled once per texture set on
// first use.
#include <adjoint/runtime/texture.h>
#include <adjoint/dsl/shared.h>

#include <algorithm>
#include <limits>
#include <string>

namespace adjoint::detail {

namespace {

// The mean of the 2x2 texels of level (src, sw, sh) under texel (x, y) of the next level; at an odd size the
// last row or column is left out, a size of 1 repeats its texel.
template <typename T, typename B>
Expr<T> box(const B& texels, const UInt& src, const UInt& sw, const UInt& sh, const UInt& x, const UInt& y) {
    std::source_location loc = std::source_location::current();
    UInt x0 = min(2u * x, sw - 1u), x1 = min(2u * x + 1u, sw - 1u);
    UInt y0 = min(2u * y, sh - 1u), y1 = min(2u * y + 1u, sh - 1u);
    auto at = [&](const UInt& xx, const UInt& yy) {
        return read_texel<T>(texels, src + (yy * sw + xx) * texel_channels<T>, loc);
    };
    return (at(x0, y0) + at(x1, y0) + at(x0, y1) + at(x1, y1)) * 0.25f;
}

template <typename T, typename B>
void write_texel(const B& buf, const UInt& at, const Expr<T>& v) {
    if constexpr (std::is_same_v<T, float>) {
        buf.write(at, v);
    } else {
        buf.write(at, v.x);
        buf.write(at + 1u, v.y);
        if constexpr (texel_channels<T> > 2) buf.write(at + 2u, v.z);
        if constexpr (texel_channels<T> > 3) buf.write(at + 3u, v.w);
    }
}

// Level dst (dw wide) from level src below it, one thread per texel of dst (2D: no divisions, which lavapipe
// does lane by lane).
template <typename T>
const auto& downsample_kernel() {
    static const Kernel2D k = [](BufferFloat texels, UInt src, UInt sw, UInt sh, UInt dst) noexcept {
        UInt2 p = dispatch_id().xy();
        write_texel<T>(texels, dst + (p.y * dispatch_size().x + p.x) * texel_channels<T>,
                       box<T>(texels, src, sw, sh, p.x, p.y));
    };
    return k;
}

// The last levels of a chain (at most kTailFloats floats together) in one dispatch of one block: the first of
// them from the level below in the texels, each further one from the previous one kept in shared memory, a
// barrier between levels. The same box() on the same values as one dispatch per level (bit for bit), without
// a dispatch per level, which on lavapipe costs more than these small levels' work. 2D loops: no divisions.
constexpr uint32_t kTailFloats = 4096, kTailBlock = 8;
template <typename T>
const auto& mip_tail_kernel() {
    static const Kernel2D k = [](BufferFloat texels, UInt src, UInt sw, UInt sh, UInt dst, UInt count) noexcept {
        set_block_size(kTailBlock, kTailBlock);
        constexpr uint32_t c = texel_channels<T>;
        Shared<float> kept(kTailFloats);   // the tail's levels so far, packed as in the texels
        UInt2 t = thread_id().xy();
        UInt w = max(sw >> 1u, 1u), h = max(sh >> 1u, 1u);
        $for (y, t.y, h, kTailBlock) {
            $for (x, t.x, w, kTailBlock) {
                Expr<T> v = box<T>(texels, src, sw, sh, x, y);
                write_texel<T>(texels, dst + (y * w + x) * c, v);
                write_texel<T>(kept, (y * w + x) * c, v);
            };
        };
        sync_block();
        UInt from = 0u, to = w * h * c;   // the level below's and this level's first float in `kept`
        $for (l, 1u, count) {
            UInt nw = max(w >> 1u, 1u), nh = max(h >> 1u, 1u);
            $for (y, t.y, nh, kTailBlock) {
                $for (x, t.x, nw, kTailBlock) {
                    Expr<T> v = box<T>(kept, from, w, h, x, y);
                    write_texel<T>(texels, dst + to + (y * nw + x) * c, v);
                    write_texel<T>(kept, to + (y * nw + x) * c, v);
                };
            };
            sync_block();
            from = to;
            to = to + nw * nh * c;
            w = nw;
            h = nh;
        };
    };
    return k;
}

// For a level 0 of even width and height taken from a range of another buffer: level 0 copied and level 1
// built in one dispatch, one thread per texel of level 1, which copies the four texels its box reads (each
// level-0 texel is read by exactly one) and averages them as box() does.
template <typename T>
const auto& even_base_and_level1_kernel() {
    static const Kernel2D k = [](BufferFloat src, UInt from_at, BufferFloat texels, UInt base, UInt w0,
                                 UInt level1) noexcept {
        constexpr uint32_t c = texel_channels<T>;
        const std::source_location loc = std::source_location::current();
        UInt2 p = dispatch_id().xy();
        std::vector<Expr<T>> v;
        for (uint32_t k = 0; k < 4; ++k) {   // (x0, y0), (x1, y0), (x0, y1), (x1, y1), as box() adds them
            Expr<uint32_t> at = ((2u * p.y + k / 2) * w0 + 2u * p.x + k % 2) * c;
            v.push_back(read_texel<T>(src, from_at + at, loc));
            write_texel<T>(texels, base + at, v[k]);
        }
        write_texel<T>(texels, level1 + (p.y * dispatch_size().x + p.x) * c, (v[0] + v[1] + v[2] + v[3]) * 0.25f);
    };
    return k;
}

// The reverse of the mip chain, gathered. Level l + 1 reads level l's columns 2x and 2x + 1 (column 0 twice at
// a width of 1; the last column of an odd width not at all), rows alike, so a texel has at most one texel
// above it: its chain (x >> k, y >> k), up to where a level no longer reads it. Adding each level's gradient
// into the level below, coarsest first (the box's reverse: a quarter of the gradient above, once per time the
// box read the texel), gives along the chain, from its top down, own + quarter (+ quarter): computed here in
// that order, with the levels' offsets and sizes worked out from level 0's (no table reads), unrolled for the
// longest chain of the set (no loops, no branches: lavapipe checks every loop and runs every branch).
template <typename T>
struct MipChain {
    std::vector<Expr<uint32_t>> offset, width, height;   // level l's, for l < max levels; the last repeats

    MipChain(uint32_t max_levels, const UInt& offset0, const Expr<uint32_t>& w0, const Expr<uint32_t>& h0,
             const UInt& levels) {
        Expr<uint32_t> o = offset0.load();
        offset.push_back(o), width.push_back(w0), height.push_back(h0);
        for (uint32_t l = 1; l < max_levels; ++l) {
            Expr<bool> in = l < levels;
            offset.push_back(ite(in, offset[l - 1] + width[l - 1] * height[l - 1] * texel_channels<T>, offset[l - 1]));
            width.push_back(ite(in, max(width[l - 1] >> 1u, 1u), width[l - 1]));
            height.push_back(ite(in, max(height[l - 1] >> 1u, 1u), height[l - 1]));
        }
    }
    // The whole gradient of texel (x, y) of `level`: the chain above it, top down.
    Expr<T> total(const BufferFloat& grad, const UInt& levels, uint32_t level, const UInt& x, const UInt& y) const {
        const std::source_location loc = std::source_location::current();
        const uint32_t n = uint32_t(offset.size());
        UInt top = level;
        Bool stopped = false;
        for (uint32_t l = level + 1; l < n; ++l) {
            stopped = stopped || l >= levels || (x >> (l - 1 - level)) >= 2u * width[l] ||
                      (y >> (l - 1 - level)) >= 2u * height[l];
            top = ite(stopped, top, l);
        }
        auto own = [&](uint32_t l) {   // for l above the top this reads an unused texel of a level
            return read_texel<T>(grad, offset[l] + ((y >> (l - level)) * width[l] + (x >> (l - level))) * texel_channels<T>,
                                 loc);
        };
        Var<T> acc = own(n - 1);
        for (uint32_t l = n - 1; l-- > level;) {
            Expr<T> mine = own(l);
            acc = ite(l < top, with_quarters(mine, acc, l), ite(l == top, mine, Expr<T>(acc)));
        }
        return acc;
    }
    // own + a quarter of `above` once per time level l + 1's box reads a texel of level l.
    Expr<T> with_quarters(const Expr<T>& own, const Expr<T>& above, uint32_t l) const {
        Expr<T> quarter = above * 0.25f;
        Expr<T> once = own + quarter, twice = once + quarter, four = twice + quarter + quarter;
        Expr<bool> wide = width[l] == 1u, high = height[l] == 1u;
        return ite(wide && high, four, ite(wide || high, twice, once));
    }
};

// dst[at] = value, or dst[at] + value where `add`.
template <typename T>
void put(const BufferFloat& dst, const Expr<uint32_t>& at, const Expr<T>& value, const UInt& add) {
    Expr<T> sum = read_texel<T>(dst, at, std::source_location::current()) + value;
    write_texel<T>(dst, at, ite(add != 0u, sum, value));
}

// One thread per texel of level 0: its whole gradient into dst (from dst_at, texel after texel).
template <typename T>
auto mip_gradient_kernel(uint32_t max_levels) {
    return Kernel2D([max_levels](BufferFloat grad, UInt offset0, UInt levels, BufferFloat dst, UInt dst_at,
                                 UInt add) noexcept {
        UInt2 p = dispatch_id().xy();
        UInt2 size = dispatch_size().xy();
        MipChain<T> chain(max_levels, offset0, size.x, size.y, levels);
        put<T>(dst, dst_at + (p.y * size.x + p.x) * texel_channels<T>, chain.total(grad, levels, 0, p.x, p.y), add);
    });
}

// The same for a level 0 of even width and height (every texel read once by level 1), one thread per texel of
// level 1: its chain once, then its four texels of level 0.
template <typename T>
auto even_mip_gradient_kernel(uint32_t max_levels) {
    return Kernel2D([max_levels](BufferFloat grad, UInt offset0, UInt levels, BufferFloat dst, UInt dst_at,
                                 UInt add) noexcept {
        constexpr uint32_t c = texel_channels<T>;
        UInt2 p = dispatch_id().xy();
        UInt2 size = dispatch_size().xy();
        MipChain<T> chain(max_levels, offset0, size.x * 2u, size.y * 2u, levels);
        Expr<T> above = chain.total(grad, levels, 1, p.x, p.y);
        for (uint32_t k = 0; k < 4; ++k) {
            Expr<uint32_t> texel = (2u * p.y + k / 2) * chain.width[0] + 2u * p.x + k % 2;
            Expr<T> own = read_texel<T>(grad, offset0 + texel * c, std::source_location::current());
            put<T>(dst, dst_at + texel * c, chain.with_quarters(own, above, 0), add);
        }
    });
}

const auto& copy_kernel() {
    static const Kernel1D k = [](BufferFloat from, BufferFloat to, UInt from_at, UInt to_at) noexcept {
        UInt i = dispatch_id().x;
        to.write(to_at + i, from.read(from_at + i));
    };
    return k;
}

const auto& add_kernel() {
    static const Kernel1D k = [](BufferFloat from, BufferFloat to, UInt from_at, UInt to_at) noexcept {
        UInt i = dispatch_id().x;
        to.write(to_at + i, to.read(to_at + i) + from.read(from_at + i));
    };
    return k;
}

// Runs commands in order, as one.
Command sequence(std::shared_ptr<const std::vector<Command>> commands) {
    return Command([commands](StreamImpl& s) {
        for (const auto& c : *commands) c(s);
    });
}

} // namespace

struct TextureStorage::Kernels {
    Shader<1> copy, add;
    Shader<2> downsample, even_base_and_level1, mip_gradient, even_mip_gradient, mip_tail;
};

namespace {
template <typename T>
std::shared_ptr<const TextureStorage::Kernels> compile_kernels(Device& d, uint32_t levels) {
    const std::string t = std::to_string(texel_channels<T>);
    return std::make_shared<const TextureStorage::Kernels>(TextureStorage::Kernels{
        d.compile(copy_kernel(), {.name = "texture_copy_base"}),
        d.compile(add_kernel(), {.name = "texture_add_base_grad"}),
        d.compile(downsample_kernel<T>(), {.name = "texture_mip_downsample_" + t}),
        d.compile(even_base_and_level1_kernel<T>(), {.name = "texture_base_and_level1_" + t}),
        d.compile(mip_gradient_kernel<T>(levels), {.name = "texture_mip_gradient_" + t}),
        d.compile(even_mip_gradient_kernel<T>(levels), {.name = "texture_even_mip_gradient_" + t}),
        d.compile(mip_tail_kernel<T>(), {.name = "texture_mip_tail_" + t})});
}
} // namespace

TextureStorage::TextureStorage(Device device, uint32_t channels, std::vector<TextureDesc> textures, std::string kind)
    : device_(std::move(device)), channels_(channels), kind_(std::move(kind)), descs_(std::move(textures)) {
    if (descs_.empty()) fail("create_texture_set: a ", kind_, " needs at least one texture");
    // The table: a header, one record per texture, then one per level (dsl/texture.h has the layout).
    std::vector<uint4> table(1 + descs_.size());
    table[0] = uint4(uint32_t(descs_.size()), 0, 0, 0);
    uint64_t floats = 0;
    for (size_t i = 0; i < descs_.size(); ++i) {
        const TextureDesc& d = descs_[i];
        if (d.width == 0 || d.height == 0)
            fail("create_texture: ", kind_, descs_.size() > 1 ? " texture " + std::to_string(i) : std::string(),
                 " of ", d.width, " x ", d.height, " texels; width and height must be at least 1");
        if (uint32_t(d.options.wrap) > uint32_t(TextureWrap::RepeatClamp))
            fail("create_texture: ", kind_, " with an unknown wrap mode ", uint32_t(d.options.wrap));
        std::vector<TextureLevel> chain;
        uint32_t w = d.width, h = d.height;
        for (;;) {
            chain.push_back({uint32_t(std::min<uint64_t>(floats, ~0u)), w, h});
            floats += uint64_t(w) * h * channels_;
            if (!d.options.mipmaps || (w == 1 && h == 1)) break;
            w = std::max(1u, w / 2);
            h = std::max(1u, h / 2);
        }
        table[1 + i] = uint4(uint32_t(table.size()), uint32_t(chain.size()), uint32_t(d.options.wrap), 0);
        for (const auto& l : chain) table.push_back(uint4(l.offset, l.width, l.height, 0));
        levels_.push_back(std::move(chain));
    }
    if (floats > std::numeric_limits<uint32_t>::max())
        fail("create_texture: ", kind_, " of ", floats, " floats with its mip levels; at most 2^32 - 1 fit");
    texels_ = device_.create_diff_buffer<float>(size_t(floats));
    table_ = device_.create_buffer<uint4>(table.size());
    Stream stream = device_.create_stream();
    stream << table_.copy_from(table.data()) << texels_.value.fill_zero() << texels_.zero_grad() << synchronize();
}

TextureStorage::~TextureStorage() = default;

const TextureStorage& texture_storage(const std::shared_ptr<TextureStorage>& s) {
    if (!s) fail("an empty texture (default-constructed or moved-from) was used");
    return *s;
}

const TextureDesc& TextureStorage::desc(uint32_t texture) const {
    if (texture >= descs_.size()) fail(kind_, ": texture ", texture, " of ", descs_.size());
    return descs_[texture];
}

uint32_t TextureStorage::levels(uint32_t texture) const {
    desc(texture);
    return uint32_t(levels_[texture].size());
}

const TextureLevel& TextureStorage::level(uint32_t texture, uint32_t l, const char* what) const {
    if (texture >= descs_.size()) fail(kind_, "::", what, ": texture ", texture, " of ", descs_.size());
    if (l >= levels_[texture].size())
        fail(kind_, "::", what, ": level ", l, " of ", levels_[texture].size(), " (levels 0 to ",
             levels_[texture].size() - 1, ")");
    return levels_[texture][l];
}

Command TextureStorage::copy_from(uint32_t texture, const float* src) const {
    const TextureLevel& l = level(texture, 0, "copy_from");
    return texels_.value.copy_from(src, l.offset, size_t(l.width) * l.height * channels_);
}

Command TextureStorage::copy_to(uint32_t texture, uint32_t lv, float* dst) const {
    const TextureLevel& l = level(texture, lv, "copy_to");
    return texels_.value.copy_to(dst, l.offset, size_t(l.width) * l.height * channels_);
}

Command TextureStorage::copy_grad_to(uint32_t texture, uint32_t lv, float* dst) const {
    const TextureLevel& l = level(texture, lv, "copy_grad_to");
    return texels_.grad.copy_to(dst, l.offset, size_t(l.width) * l.height * channels_);
}

Command TextureStorage::copy_base_from(uint32_t texture, const Buffer<float>& src, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "copy_base_from");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > src.size() || count > src.size() - offset)
        fail(kind_, "::copy_base_from: floats [", offset, ", ", offset + count, ") of a buffer of ", src.size());
    return kernels().copy(src, texels_, offset, l.offset).dispatch(uint32_t(count));
}

Command TextureStorage::add_base_grad_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "add_base_grad_to");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > dst.size() || count > dst.size() - offset)
        fail(kind_, "::add_base_grad_to: floats [", offset, ", ", offset + count, ") of a buffer of ", dst.size());
    return kernels().add(texels_.grad, dst, l.offset, offset).dispatch(uint32_t(count));
}

const TextureStorage::Kernels& TextureStorage::kernels() const {
    std::lock_guard lock(mutex_);
    if (!kernels_) {
        Device d = device_;
        uint32_t levels = 1;
        for (const auto& chain : levels_) levels = std::max(levels, uint32_t(chain.size()));
        switch (channels_) {
        case 1: kernels_ = compile_kernels<float>(d, levels); break;
        case 2: kernels_ = compile_kernels<float2>(d, levels); break;
        case 3: kernels_ = compile_kernels<float3>(d, levels); break;
        default: kernels_ = compile_kernels<float4>(d, levels); break;
        }
    }
    return *kernels_;
}

// The mip commands of build_mips() and backward_mips() are made once: their arguments never change.
Command TextureStorage::build_mips() const {
    const Kernels& k = kernels();
    std::lock_guard lock(mutex_);
    if (!build_) {
        auto list = std::make_shared<std::vector<Command>>();
        for (uint32_t t = 0; t < levels_.size(); ++t) append_levels(*list, k, t, 1);
        build_ = std::make_shared<const Command>(sequence(std::move(list)));
    }
    return *build_;
}

// Levels `from`.. of a texture from the level below each: one dispatch per level up to the tail, the last
// levels of at most kTailFloats floats (two or more) in one.
void TextureStorage::append_levels(std::vector<Command>& list, const Kernels& k, uint32_t texture,
                                   size_t from) const {
    const auto& chain = levels_[texture];
    from = std::max<size_t>(from, 1);
    size_t tail = chain.size();
    for (uint64_t floats = 0; tail > from; --tail) {
        floats += uint64_t(chain[tail - 1].width) * chain[tail - 1].height * channels_;
        if (floats > kTailFloats) break;
    }
    if (chain.size() - tail < 2) tail = chain.size();
    for (size_t l = from; l < tail; ++l) {
        const TextureLevel &s = chain[l - 1], &d = chain[l];
        list.push_back(k.downsample(texels_, s.offset, s.width, s.height, d.offset).dispatch(d.width, d.height));
    }
    if (tail == chain.size()) return;
    const TextureLevel& s = chain[tail - 1];
    list.push_back(k.mip_tail(texels_, s.offset, s.width, s.height, chain[tail].offset, uint32_t(chain.size() - tail))
                       .dispatch(kTailBlock, kTailBlock));
}

// Level 0 of even width and height has its gradient gathered by one thread per texel of level 1.
static bool even_base(const std::vector<TextureLevel>& chain) {
    return chain.size() > 1 && chain[0].width % 2 == 0 && chain[0].height % 2 == 0;
}

Command TextureStorage::mip_gradient(const Kernels& k, uint32_t texture, const Buffer<float>& dst, uint32_t dst_at,
                                     bool add) const {
    const auto& chain = levels_[texture];
    const TextureLevel &l0 = chain[0], &l1 = chain[std::min<size_t>(1, chain.size() - 1)];
    const uint32_t levels = uint32_t(chain.size());
    if (even_base(chain))
        return k.even_mip_gradient(texels_.grad, l0.offset, levels, dst, dst_at, uint32_t(add))
            .dispatch(l1.width, l1.height);
    return k.mip_gradient(texels_.grad, l0.offset, levels, dst, dst_at, uint32_t(add)).dispatch(l0.width, l0.height);
}

Command TextureStorage::backward_mips() const {
    const Kernels& k = kernels();
    std::lock_guard lock(mutex_);
    if (!backward_) {
        // Each level 0 gathered into a buffer of its own, then copied back: a kernel that read the chain and wrote
        // level 0 through two bindings of one buffer would be wrong on a GPU, whose compiler may take two storage
        // buffers for distinct (SPIR-V's default without Aliased; on an H200 some texels came out wrong).
        size_t most = 0;
        for (const auto& chain : levels_) most = std::max(most, size_t(chain[0].width) * chain[0].height * channels_);
        Device device = device_;   // a handle: create_buffer is not const
        Buffer<float> gathered = device.create_buffer<float>(most);   // the commands keep it
        auto list = std::make_shared<std::vector<Command>>();
        for (uint32_t t = 0; t < levels_.size(); ++t) {
            const TextureLevel& l0 = levels_[t][0];
            if (levels_[t].size() == 1) continue;
            list->push_back(mip_gradient(k, t, gathered, 0, false));
            list->push_back(k.copy(gathered, texels_.grad, 0u, l0.offset).dispatch(l0.width * l0.height * channels_));
        }
        backward_ = std::make_shared<const Command>(sequence(std::move(list)));
    }
    return *backward_;
}

Command TextureStorage::build_mips_from(uint32_t texture, const Buffer<float>& src, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "build_mips_from");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > src.size() || count > src.size() - offset)
        fail(kind_, "::build_mips_from: floats [", offset, ", ", offset + count, ") of a buffer of ", src.size());
    const Kernels& k = kernels();
    const auto& chain = levels_[texture];
    auto list = std::make_shared<std::vector<Command>>();
    if (even_base(chain)) {
        list->push_back(k.even_base_and_level1(src, uint32_t(offset), texels_, l.offset, l.width, chain[1].offset)
                            .dispatch(chain[1].width, chain[1].height));
        append_levels(*list, k, texture, 2);
    } else {
        list->push_back(k.copy(src, texels_, offset, l.offset).dispatch(uint32_t(count)));
        append_levels(*list, k, texture, 1);
    }
    return sequence(std::move(list));
}

Command TextureStorage::backward_mips_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "backward_mips_to");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > dst.size() || count > dst.size() - offset)
        fail(kind_, "::backward_mips_to: floats [", offset, ", ", offset + count, ") of a buffer of ", dst.size());
    return mip_gradient(kernels(), texture, dst, uint32_t(offset), true);
}

} // namespace adjoint::detail
