// The mip kernels of texture sets, in the DSL: the 2x2 box filter that builds a chain, and its reverse gathered
// along each level-0 texel's chain for the gradients; compiled once per texture set (runtime/texture.cpp).
#include "runtime/texture_kernels.h"

#include <adjoint/dsl/shared.h>

#include <algorithm>
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

// Texel (x, y) of level 1 over an even level 0 taken from src (from from_at, w0 wide): the four level-0 texels
// under it, each read once and copied into the texels at base, averaged as box() adds them.
template <typename T>
Expr<T> copied_box(const BufferFloat& src, const UInt& from_at, const BufferFloat& texels, const UInt& base,
                   const UInt& w0, const Expr<uint32_t>& x, const Expr<uint32_t>& y) {
    const std::source_location loc = std::source_location::current();
    std::vector<Expr<T>> v;
    for (uint32_t k = 0; k < 4; ++k) {   // (x0, y0), (x1, y0), (x0, y1), (x1, y1), as box() adds them
        Expr<uint32_t> at = ((2u * y + k / 2) * w0 + 2u * x + k % 2) * texel_channels<T>;
        v.push_back(read_texel<T>(src, from_at + at, loc));
        write_texel<T>(texels, base + at, v[k]);
    }
    return (v[0] + v[1] + v[2] + v[3]) * 0.25f;
}

// For a level 0 of even width and height taken from a range of another buffer: level 0 copied and level 1
// built in one dispatch, one thread per texel of level 1, which copies the four texels its box reads (each
// level-0 texel is read by exactly one) and averages them as box() does.
template <typename T>
const auto& even_base_and_level1_kernel() {
    static const Kernel2D k = [](BufferFloat src, UInt from_at, BufferFloat texels, UInt base, UInt w0,
                                 UInt level1) noexcept {
        UInt2 p = dispatch_id().xy();
        write_texel<T>(texels, level1 + (p.y * dispatch_size().x + p.x) * texel_channels<T>,
                       copied_box<T>(src, from_at, texels, base, w0, p.x, p.y));
    };
    return k;
}

// A row of four texels of T (c floats each) as the c float4s that hold them, and back: the mip kernels below
// read and write a level 0 whose rows are whole float4s (width a multiple of 4, the chain on a whole float4)
// a float4 at a time, lavapipe's cost per access being about the same for a float4 as for a float.
template <typename T>
std::vector<Expr<T>> texels_of(const std::vector<Expr<float4>>& q) {
    constexpr uint32_t c = texel_channels<T>;
    auto f = [&](uint32_t i) -> Expr<float> { return q[i / 4][i % 4]; };
    std::vector<Expr<T>> t;
    for (uint32_t k = 0; k < 4; ++k) {
        if constexpr (c == 1) t.push_back(f(k));
        else if constexpr (c == 2) t.push_back(make_float2(f(2 * k), f(2 * k + 1)));
        else if constexpr (c == 3) t.push_back(make_float3(f(3 * k), f(3 * k + 1), f(3 * k + 2)));
        else t.push_back(q[k]);
    }
    return t;
}
template <typename T>
std::vector<Expr<float4>> float4s_of(const std::vector<Expr<T>>& t) {
    constexpr uint32_t c = texel_channels<T>;
    auto f = [&](uint32_t i) -> Expr<float> {
        if constexpr (c == 1) return t[i];
        else return t[i / c][i % c];
    };
    std::vector<Expr<float4>> q;
    for (uint32_t j = 0; j < c; ++j) q.push_back(make_float4(f(4 * j), f(4 * j + 1), f(4 * j + 2), f(4 * j + 3)));
    return q;
}

// The float4 where row r of the 4x4 level-0 texels under level-2 texel p starts, counted from level 0's first
// float4: (4 p.y + r) * w0 + 4 p.x texels of c floats, a multiple of 4 floats when w0 is.
inline Expr<uint32_t> block_row(const Expr<uint2>& p, uint32_t r, const Expr<uint32_t>& w0, uint32_t c) {
    return ((4u * p.y + r) * (w0 >> 2u) + p.x) * c;
}

// For a level 0 whose width and height are multiples of 4 (level 1 even too), on a whole float4 both in src
// (from float4 from4) and in the texels (float4 base4): level 0 copied and levels 1 and 2 built in one dispatch,
// one thread per texel of level 2: its 4x4 texels of level 0 copied a float4 at a time, its four texels of level 1
// each from the four under it, then their mean. The same additions in the same order as box() level by level (the
// tests compare bit for bit); the levels above start from level 2, so a chain's tail has a quarter of the work. The
// texels are written as float4s (level 0) and as floats (levels 1 and 2), disjoint ranges of one buffer.
template <typename T>
const auto& aligned_base_and_levels12_kernel() {
    static const Kernel2D k = [](BufferFloat4 src, UInt from4, BufferFloat4 texels4, BufferFloat texels, UInt base4,
                                 UInt w0, UInt level1, UInt level2) noexcept {
        constexpr uint32_t c = texel_channels<T>;
        UInt2 p = dispatch_id().xy();
        std::vector<std::vector<Expr<T>>> zero;   // [row][column] of the 4x4 texels of level 0
        for (uint32_t r = 0; r < 4; ++r) {
            Expr<uint32_t> row = block_row(p, r, w0, c);
            std::vector<Expr<float4>> q;
            for (uint32_t j = 0; j < c; ++j) {
                q.push_back(src.read(from4 + row + j));
                texels4.write(base4 + row + j, q[j]);
            }
            zero.push_back(texels_of<T>(q));
        }
        std::vector<Expr<T>> one;   // level 1's (x0, y0), (x1, y0), (x0, y1), (x1, y1), as box() adds them
        for (uint32_t j = 0; j < 4; ++j) {
            const uint32_t r = 2 * (j / 2), col = 2 * (j % 2);
            one.push_back((zero[r][col] + zero[r][col + 1] + zero[r + 1][col] + zero[r + 1][col + 1]) * 0.25f);
            Expr<uint32_t> x1 = 2u * p.x + j % 2, y1 = 2u * p.y + j / 2;
            write_texel<T>(texels, level1 + (y1 * (w0 >> 1u) + x1) * c, one[j]);
        }
        write_texel<T>(texels, level2 + (p.y * dispatch_size().x + p.x) * c,
                       (one[0] + one[1] + one[2] + one[3]) * 0.25f);
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

// The same for a level 0 as aligned_base_and_levels12 takes it (width and height multiples of 4, on a whole
// float4 in the gradients, from float4 offset4, and in dst, from float4 dst4_at), one thread per texel of level 2:
// its chain once, its four texels of level 1, then its 4x4 texels of level 0 read and put a float4 at a time.
// The same additions in the same order as even_mip_gradient, level by level.
template <typename T>
auto aligned_mip_gradient_kernel(uint32_t max_levels) {
    return Kernel2D([max_levels](BufferFloat grad, BufferFloat4 grad4, UInt offset4, UInt levels, BufferFloat4 dst4,
                                 UInt dst4_at, UInt add) noexcept {
        constexpr uint32_t c = texel_channels<T>;
        UInt2 p = dispatch_id().xy();
        UInt2 size = dispatch_size().xy();
        UInt offset0 = offset4 * 4u;
        MipChain<T> chain(max_levels, offset0, size.x * 4u, size.y * 4u, levels);
        Expr<T> above = chain.total(grad, levels, 2, p.x, p.y);
        std::vector<Expr<T>> one;   // the whole gradients of level 1's (x0, y0), (x1, y0), (x0, y1), (x1, y1)
        for (uint32_t j = 0; j < 4; ++j) {
            Expr<uint32_t> x1 = 2u * p.x + j % 2, y1 = 2u * p.y + j / 2;
            Expr<T> own = read_texel<T>(grad, chain.offset[1] + (y1 * chain.width[1] + x1) * c,
                                        std::source_location::current());
            one.push_back(chain.with_quarters(own, above, 1));
        }
        for (uint32_t r = 0; r < 4; ++r) {
            Expr<uint32_t> row = block_row(p, r, chain.width[0], c);
            std::vector<Expr<float4>> q;
            for (uint32_t j = 0; j < c; ++j) q.push_back(grad4.read(offset4 + row + j));
            std::vector<Expr<T>> own = texels_of<T>(q), whole;
            for (uint32_t col = 0; col < 4; ++col)
                whole.push_back(chain.with_quarters(own[col], one[2 * (r / 2) + col / 2], 0));
            std::vector<Expr<float4>> out = float4s_of<T>(whole);
            for (uint32_t j = 0; j < c; ++j) {
                Expr<uint32_t> at = dst4_at + row + j;
                dst4.write(at, ite(add != 0u, dst4.read(at) + out[j], out[j]));
            }
        }
    });
}

const auto& add_kernel() {
    static const Kernel1D k = [](BufferFloat from, BufferFloat to, UInt from_at, UInt to_at) noexcept {
        UInt i = dispatch_id().x;
        to.write(to_at + i, to.read(to_at + i) + from.read(from_at + i));
    };
    return k;
}

template <typename T>
std::shared_ptr<const TextureStorage::Kernels> compile_kernels(Device& d, uint32_t levels) {
    const std::string t = std::to_string(texel_channels<T>);
    return std::make_shared<const TextureStorage::Kernels>(TextureStorage::Kernels{
        d.compile(add_kernel(), {.name = "texture_add_base_grad"}),
        d.compile(downsample_kernel<T>(), {.name = "texture_mip_downsample_" + t}),
        d.compile(even_base_and_level1_kernel<T>(), {.name = "texture_base_and_level1_" + t}),
        d.compile(aligned_base_and_levels12_kernel<T>(),
                  {.name = "texture_base_and_levels12_" + t, .disjoint_views = true}),
        d.compile(mip_gradient_kernel<T>(levels), {.name = "texture_mip_gradient_" + t}),
        d.compile(even_mip_gradient_kernel<T>(levels), {.name = "texture_even_mip_gradient_" + t}),
        // Unrolled for at least three levels: it reads levels 0, 1 and 2 itself (shorter chains never run it).
        d.compile(aligned_mip_gradient_kernel<T>(std::max(levels, 3u)), {.name = "texture_aligned_mip_gradient_" + t}),
        d.compile(mip_tail_kernel<T>(), {.name = "texture_mip_tail_" + t})});
}

} // namespace

std::shared_ptr<const TextureStorage::Kernels> compile_texture_kernels(Device device, uint32_t channels,
                                                                     uint32_t levels) {
    switch (channels) {
    case 1: return compile_kernels<float>(device, levels);
    case 2: return compile_kernels<float2>(device, levels);
    case 3: return compile_kernels<float3>(device, levels);
    default: return compile_kernels<float4>(device, levels);
    }
}

} // namespace adjoint::detail
