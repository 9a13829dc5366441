// nvdiffrast's texture and texture_construct_mip for adjoint.torch: sampling and the mip chain as engine kernels
// over one flat float stack (every level of every texture and face), the backward the same DSL in $autodiff.
//
// Conventions (nvdiffrast's): uv (0, 0) is the corner of texel (row 0, column 0) in memory, texel centres at
// half-integers; cube faces +x, -x, +y, -y, +z, -z with OpenGL's face axes; a mip level is the 2x2 mean of the
// one below (a side of 1 stays 1); the level of detail is log2 of the major axis of the pixel's footprint in
// level-0 texels (from uv_da) plus mip_level_bias, clamped to [0, levels - 1].
// Layout: level l starts at table[l].x floats, [tex_minibatch, faces, h_l, w_l, channels]; table[l] = (offset,
// w, h, tex_minibatch x faces).
#include "runtime.h"
#include "texture_lookup.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace adjoint::python {

namespace {

// A thread a group of W channels of a pixel.
template <bool IsCube, int W>
auto texture_kernel() {
    return Kernel1D([](BufferFloat tex, BufferVar<uint4> table, BufferFloat uv, BufferFloat da, BufferFloat bias,
                       UInt4 c0, UInt4 c1, BufferFloat out) noexcept {
        UInt i = dispatch_id().x * uint32_t(W);   // the group's first float of out
        write_channels<W>(out, i, texture_value<IsCube, W>(tex, table, uv, da, bias, c0, c1, i / c0.w, i % c0.w));
    });
}

// A pixel's few floats (its uv, uv_da or mip_level_bias) held in variables and read as texture_value reads a
// buffer, at first + k for k < N: the backward kernel marks them for $autodiff and writes their gradients once.
template <int N>
struct PixelFloats {
    explicit PixelFloats(const UInt& at) : first(at) {}
    UInt first;
    Float v[N];
    Float read(const UInt& i) const {
        UInt k = i - first;
        Float r = v[N - 1];
        for (int j = N - 2; j >= 0; --j) r = ite(k == uint32_t(j), v[j], r);
        return r;
    }
};

// In the backward kernel, the texel reads of one lookup, held by the engine's HeldTexels over this module's own
// stack: each tap (a call of read_channels, in trace order: at most two levels of four) is a variable marked for
// $autodiff with its address beside it (kNoSlot for a tap the lookup did not reach), so that the kernel adds the
// taps' gradients itself (TapRunSums). This class only gives texture_lookup.h's reads a type of this namespace.
template <int W>
class HeldTaps {
public:
    static constexpr int kMax = 8;
    explicit HeldTaps(const BufferFloat& values) : values_(values), held_(kMax) {}
    Chan<W> read(const UInt& at) const { return held_.hold(read_channels<W>(values_, at).load(), at.load()); }
    const auto& held() const { return held_; }

private:
    const BufferFloat& values_;
    mutable HeldTexels<typename Chan<W>::value_type> held_;
};
// texture_lookup.h's taps read through this (found by argument-dependent lookup), the buffers' through that one.
using python::read_channels;
template <int W, int V>
Chan<W> read_channels(const HeldTaps<V>& taps, const UInt& at) {
    static_assert(W == V, "a lookup reads its taps' channels as one group");
    return taps.read(at);
}

// A run of lookups' tap gradients (RunSums, channels.h), summed per tap while its address stays the same and added
// by float atomics (one a channel) when it moves on. A float atomic is a compare-and-swap on lavapipe:
// a lookup's 4 or 8 taps of W channels each took 56 of py_texture_backward's 100 ms at 1024x1024 pixels (a 512x512
// texture, three channels), and neighbouring pixels mostly read the same texels where a texture is magnified (a
// quarter to a half of them at about a texel a pixel).
template <int W>
using TapRunSums = RunSums<HeldTaps<W>::kMax, W>;
// Inside the $autodiff block that read `taps`, after its backward: their gradients into the run's sums, a slot a tap.
template <int W>
void add_taps(TapRunSums<W>& sums, const HeldTaps<W>& taps) {
    for (int k = 0; k < taps.held().used(); ++k) sums.add(k, taps.held().at(k), grad(taps.held().value(k)));
}

// d loss / d out into the stack's gradient (every level read), uv, uv_da and mip_level_bias. A thread a run of
// `run` pixels (the images' pixels in order; backward_run), each pixel's channels W at a time: its uv, uv_da and bias gradients
// sum in registers and are written once (a thread a (pixel, channel) added them by float atomics, three threads to one
// element: py_texture_backward took 137 ms for a 512x512 texture magnified onto 1024x1024 pixels), its taps' into the
// run's sums (TapRunSums).
template <bool IsCube, int W>
auto texture_backward_kernel() {
    return Kernel1D([](BufferFloat tex, BufferFloat tex_grad, BufferVar<uint4> table, BufferFloat uv, BufferFloat da,
                       BufferFloat bias, UInt4 c0, UInt4 c1, UInt pixels, UInt run, BufferFloat gout,
                       BufferFloat guv, BufferFloat gda, BufferFloat gbias) noexcept {
        constexpr int n = IsCube ? 3 : 2, nd = IsCube ? 6 : 4;
        UInt first = dispatch_id().x * run;
        Bool has_da = (c1.w & HasDa) != 0u, has_bias = (c1.w & HasBias) != 0u;
        TapRunSums<W> sums(tex_grad);
        $for (p, first, min(first + run, pixels)) {
            PixelFloats<n> u(p * uint32_t(n));
            PixelFloats<nd> d(p * uint32_t(nd));
            PixelFloats<1> b(p);
            Float gu[n], gd[nd];
            for (int k = 0; k < n; ++k) {
                u.v[k] = uv.read(p * uint32_t(n) + uint32_t(k));
                gu[k] = 0.0f;
            }
            for (int k = 0; k < nd; ++k) {
                d.v[k] = ite(has_da, da.read(ite(has_da, p * uint32_t(nd) + uint32_t(k), 0u)), 0.0f);
                gd[k] = 0.0f;
            }
            b.v[0] = ite(has_bias, bias.read(ite(has_bias, p, 0u)), 0.0f);
            Float gb = 0.0f;
            $for (ch, 0u, c0.w, uint32_t(W)) {
                Chan<W> g = read_channels<W>(gout, p * c0.w + ch);
                $if (sum_channels<W>(abs(g)) != 0.0f) {
                    HeldTaps<W> taps(tex);
                    $autodiff {
                        for (int k = 0; k < n; ++k) requires_grad(u.v[k]);
                        for (int k = 0; k < nd; ++k) requires_grad(d.v[k]);
                        requires_grad(b.v[0]);
                        backward(sum_channels<W>(g * texture_value<IsCube, W>(taps, table, u, d, b, c0, c1, p, ch)));
                        for (int k = 0; k < n; ++k) gu[k] = gu[k] + grad(u.v[k]);
                        for (int k = 0; k < nd; ++k) gd[k] = gd[k] + grad(d.v[k]);
                        gb = gb + grad(b.v[0]);
                        add_taps(sums, taps);
                    };
                };
            };
            for (int k = 0; k < n; ++k) guv.write(p * uint32_t(n) + uint32_t(k), gu[k]);
            $if (has_da) {
                for (int k = 0; k < nd; ++k) gda.write(p * uint32_t(nd) + uint32_t(k), gd[k]);
            };
            $if (has_bias) { gbias.write(p, gb); };
        };
        sums.finish();
    });
}

// Level l + 1 from level l: each texel the mean of its 2x2 children (a side of 1 reads its one texel twice).
// `i` runs over level l + 1's floats; `read` reads level l's.
template <typename Read>
Float box(const Read& read, const UInt4& fine, const UInt4& coarse, const UInt& i, const UInt& channels) {
    UInt ch = i % channels, q = i / channels;
    UInt x = q % coarse.y, y = (q / coarse.y) % coarse.z, image = q / (coarse.y * coarse.z);
    UInt x0 = ite(fine.y > 1u, x * 2u, 0u), x1 = ite(fine.y > 1u, x * 2u + 1u, 0u);
    UInt y0 = ite(fine.z > 1u, y * 2u, 0u), y1 = ite(fine.z > 1u, y * 2u + 1u, 0u);
    UInt row0 = fine.x + (image * fine.z + y0) * fine.y * channels, row1 = fine.x + (image * fine.z + y1) * fine.y * channels;
    return 0.25f * (read(row0 + x0 * channels + ch) + read(row0 + x1 * channels + ch) +
                    read(row1 + x0 * channels + ch) + read(row1 + x1 * channels + ch));
}

auto mip_kernel() {
    return Kernel1D([](BufferFloat stack, BufferVar<uint4> table, UInt level, UInt channels) noexcept {
        UInt i = dispatch_id().x;
        UInt4 fine = table.read(level), coarse = table.read(level + 1u);
        stack.write(coarse.x + i, box([&](const UInt& k) { return stack.read(k); }, fine, coarse, i, channels));
    });
}

// The reverse of mip_kernel for one level, by $autodiff: each float of level l marks its own value, recomputes
// its parent's mean, and adds d parent / d itself times the parent's gradient into its own gradient.
auto mip_backward_kernel() {
    return Kernel1D([](BufferFloat stack, BufferFloat gstack, BufferVar<uint4> table, UInt level, UInt channels) noexcept {
        UInt k = dispatch_id().x;   // a float of level `level`
        UInt4 fine = table.read(level), coarse = table.read(level + 1u);
        UInt ch = k % channels, q = k / channels;
        UInt x = q % fine.y, y = (q / fine.y) % fine.z, image = q / (fine.y * fine.z);
        UInt parent = ((image * coarse.z + min(y / 2u, coarse.z - 1u)) * coarse.y + min(x / 2u, coarse.y - 1u)) * channels + ch;
        UInt self = fine.x + k;
        Float v = stack.read(self);
        $autodiff {
            requires_grad(v);
            Float mean = box([&](const UInt& at) { return ite(at == self, v, stack.read(at)); }, fine, coarse, parent, channels);
            backward(gstack.read(coarse.x + parent) * mean);
            gstack.write(self, gstack.read(self) + grad(v));
        };
    });
}

// The mip kernels, and the lookups compiled on first use for each kind (2D or cube) and group width: a call
// compiles only what it runs.
struct TextureShaders {
    Shader<1> mip, mip_backward;
    std::optional<Shader<1>> lookup[2][2][4];   // [backward][cube][W - 1]

    template <bool Backward, bool IsCube, int W>
    Shader<1>& get(Device& device) {
        auto& s = lookup[Backward][IsCube][W - 1];
        if (!s) {
            const std::string name = std::string(IsCube ? "py_texture_cube" : "py_texture") +
                                     (Backward ? "_backward" : "") + (W > 1 ? "_" + std::to_string(W) : "");
            if constexpr (Backward)
                s.emplace(device.compile(texture_backward_kernel<IsCube, W>(), {.name = name}));
            else
                s.emplace(device.compile(texture_kernel<IsCube, W>(), {.name = name}));
        }
        return *s;
    }
    template <bool Backward>
    Shader<1>& lookup_for(Device& device, bool cube, uint32_t w) {
        return with_group_width(w, [&]<int W>() -> Shader<1>& {
            return cube ? get<Backward, true, W>(device) : get<Backward, false, W>(device);
        });
    }
};

TextureShaders& shaders(Runtime& rt) {
    if (!rt.texture_shaders)
        rt.texture_shaders = std::make_shared<TextureShaders>(TextureShaders{
            rt.device.compile(mip_kernel(), {.name = "py_texture_mip"}),
            rt.device.compile(mip_backward_kernel(), {.name = "py_texture_mip_backward"}), {}});
    return *static_cast<TextureShaders*>(rt.texture_shaders.get());
}

// The backward kernel's pixels a thread: kGradRun, fewer where a pixel's channel groups are so many that the run's
// loop iterations (a run's pixels times its groups) would pass lavapipe's 65,535 (thousands of channels).
uint32_t backward_run(uint32_t groups) { return std::clamp(60000u / (groups + 1u), 1u, kGradRun); }

// The level table as uint4 records and the number of floats in each level.
std::vector<uint4> level_table(const UArray& table, std::vector<uint32_t>& counts, uint32_t per_texel) {
    std::vector<uint4> t(size_t(table.shape(0)));
    for (size_t l = 0; l < t.size(); ++l) {
        t[l] = uint4{table.at(l, 0), table.at(l, 1), table.at(l, 2), table.at(l, 3)};
        counts.push_back(table.at(l, 1) * table.at(l, 2) * per_texel);
    }
    return t;
}

} // namespace

void bind_texture_ops(py::module_& m) {
    // stack: every level's floats, level 0 filled; table [L, 4] = (offset, w, h, images), images = tex minibatch x
    // faces. Fills levels 1.. with the mip chain and returns the whole stack.
    m.def("_texture_build_mip", [](const FArray& stack, const UArray& table, uint32_t images, uint32_t channels) {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        std::vector<uint32_t> counts;
        auto t = level_table(table, counts, images * channels);
        auto s = device_buffer<float>(*rt, std::max<size_t>(size_t(stack.size()), 1), "the mip stack");
        auto tb = rt->device.create_buffer<uint4>(t.size());
        stream << s.copy_from(stack.data()) << tb.copy_from(t.data());
        for (uint32_t l = 0; l + 1 < t.size(); ++l) stream << shaders(*rt).mip(s, tb, l, channels).dispatch(counts[l + 1]);
        FArray out(std::vector<py::ssize_t>{stack.size()});
        copy_out(stream, s, out);
        stream << synchronize();
        return out;
    });
    // The lookup: c0 = (filter, boundary, levels, channels), c1 = (pixels per image, tex batched, faces, flags);
    // uv [P, 2 or 3]; returns [P, channels]. With grad [P, channels]: (d stack, d uv, d uv_da, d bias), and with
    // `chain` the stack's gradient carried down the mip chain into level 0 as well.
    m.def("_texture", [](const FArray& stack, const UArray& table, const FArray& uv, std::optional<FArray> da,
                         std::optional<FArray> bias, std::array<uint32_t, 4> a0, std::array<uint32_t, 4> a1, bool cube,
                         std::optional<FArray> grad, bool chain) -> py::object {
        auto rt = runtime();
        OpStream op(*rt);
        Stream& stream = *op;
        std::vector<uint32_t> counts;
        auto t = level_table(table, counts, 1);
        auto tb = rt->device.create_buffer<uint4>(t.size());
        stream << tb.copy_from(t.data());
        const uint4 c0{a0[0], a0[1], a0[2], a0[3]}, c1{a1[0], a1[1], a1[2], a1[3]};
        const size_t pixels = size_t(uv.shape(0)), n = pixels * a0[3];
        const uint32_t w = group_width(a0[3]);
        auto& sh = shaders(*rt);
        // uv_da and mip_level_bias may be None: a buffer of one float then, never read.
        auto plain = [&](const std::optional<FArray>& a, const char* what) {
            return a ? upload<float>(*rt, stream, *a, size_t(a->size()), what) : rt->device.create_buffer<float>(1);
        };
        auto u = upload<float>(*rt, stream, uv, size_t(uv.size()), "uv");
        auto d = plain(da, "uv_da"), b = plain(bias, "mip_level_bias");
        if (!grad) {
            auto s = upload<float>(*rt, stream, stack, size_t(stack.size()), "stack");
            auto o = device_buffer<float>(*rt, std::max<size_t>(n, 1), "out");
            FArray out(std::vector<py::ssize_t>{uv.shape(0), py::ssize_t(a0[3])});
            if (n) stream << sh.lookup_for<false>(rt->device, cube, w)(s, tb, u, d, b, c0, c1, o).dispatch(n / w);
            copy_out(stream, o, out);
            stream << synchronize();
            return out;
        }
        auto s = upload_diff<float>(*rt, stream, stack, size_t(stack.size()), "stack");
        auto g = upload<float>(*rt, stream, *grad, n, "grad");
        auto gu = device_buffer<float>(*rt, std::max<size_t>(size_t(uv.size()), 1), "uv gradient");
        auto gd = device_buffer<float>(*rt, da ? std::max<size_t>(size_t(da->size()), 1) : 1, "uv_da gradient");
        auto gb = device_buffer<float>(*rt, bias ? std::max<size_t>(size_t(bias->size()), 1) : 1,
                                       "mip_level_bias gradient");
        const uint32_t run = backward_run(a0[3] / w);
        if (pixels)
            stream << sh.lookup_for<true>(rt->device, cube, w)(s.value, s.grad, tb, u, d, b, c0, c1,
                                                                 uint32_t(pixels), run, g, gu, gd, gb)
                          .dispatch((pixels + run - 1) / run);
        if (chain) {
            for (size_t l = t.size(); l-- > 1;)
                stream << sh.mip_backward(s.value, s.grad, tb, uint32_t(l - 1), a0[3]).dispatch(
                              size_t(t[l].w) * t[l - 1].y * t[l - 1].z * a0[3]);
        }
        // The gradients straight into arrays shaped as the inputs (empty for None), one synchronize for all.
        auto out_like = [&](const Buffer<float>& from, const std::optional<FArray>& like) {
            if (!like) return FArray(std::vector<py::ssize_t>{0});
            FArray out(std::vector<py::ssize_t>(like->shape(), like->shape() + like->ndim()));
            copy_out(stream, from, out);
            return out;
        };
        FArray g_stack = out_like(s.grad, stack), g_uv = out_like(gu, uv), g_da = out_like(gd, da), g_bias = out_like(gb, bias);
        stream << synchronize();
        return py::make_tuple(g_stack, g_uv, g_da, g_bias);
    }, py::arg("stack"), py::arg("table"), py::arg("uv"), py::arg("da"), py::arg("bias"), py::arg("c0"), py::arg("c1"),
       py::arg("cube"), py::arg("grad") = py::none(), py::arg("chain") = false);
}

} // namespace adjoint::python
