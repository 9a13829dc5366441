// Forward rendering: mip chains and shading (no gradients).
#include "forward.h"

namespace adjoint::app {

namespace {

template <typename P>
Float3 box2x2(const P& src, const UInt& offset, const UInt& w, const UInt& h, const UInt& x, const UInt& y) {
    UInt x0 = min(2u * x, w - 1u), x1 = min(2u * x + 1u, w - 1u);
    UInt y0 = min(2u * y, h - 1u), y1 = min(2u * y + 1u, h - 1u);
    auto at = [&](const UInt& xx, const UInt& yy) { return read3(src, offset + (yy * w + xx) * 3u); };
    return (at(x0, y0) + at(x1, y0) + at(x0, y1) + at(x1, y1)) * 0.25f;
}

} // namespace

MipKernels::MipKernels(Device& device)
    : copy_base(device.compile(Kernel1D([](BufferFloat params, BufferFloat mips, UInt from, UInt to) noexcept {
                                   UInt i = dispatch_id().x;
                                   mips.write(to + i, params.read(from + i));
                               }),
                               {.name = "mip_copy_base"})),
      downsample(device.compile(Kernel1D([](BufferFloat mips, UInt src, UInt sw, UInt sh, UInt dst, UInt dw) noexcept {
                                    UInt i = dispatch_id().x;
                                    UInt x = i % dw, y = i / dw;
                                    Float3 c = box2x2(mips, src, sw, sh, x, y);
                                    mips.write(dst + i * 3u, c.x);
                                    mips.write(dst + i * 3u + 1u, c.y);
                                    mips.write(dst + i * 3u + 2u, c.z);
                                }),
                                {.name = "mip_downsample"})) {}

void MipKernels::build(Stream& stream, const MipTable& table, const Buffer<float>& params, const Buffer<float>& mips) {
    for (const auto& t : table.textures) {
        const auto& base = table.levels[t.first_level];
        stream << copy_base(params, mips, t.base, base.offset).dispatch(base.width * base.height * 3);
        for (uint32_t l = 1; l < t.levels; ++l) {
            const auto& s = table.levels[t.first_level + l - 1];
            const auto& d = table.levels[t.first_level + l];
            stream << downsample(mips, s.offset, s.width, s.height, d.offset, d.width).dispatch(d.width * d.height);
        }
    }
}

struct ForwardRenderer::Kernels {
    MipKernels mips;
    Shader<2> shade;
};

ForwardRenderer::ForwardRenderer(Device& device, const SceneData& scene) {
    std::vector<ShadeLight> lights = scene.lights;
    Kernel2D shade_kernel = [lights](BufferVar<gpu::Surface> surfaces, BufferFloat params, BufferFloat mips,
                              BufferVar<gpu::Material> materials, BufferVar<gpu::Texture> textures,
                              BufferVar<gpu::MipLevel> levels, BufferFloat4 image, Float3 eye,
                              Float3 background) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        auto s = surfaces.read(at);
        Float3 c = background;
        $if (s.material != gpu::kNone) {
            ShadeInputs<BufferFloat> in{params, mips, materials, textures, levels};
            c = shade_surface(in, lights, s, eye);
        };
        image.write(at, make_float4(c, 1.0f));
    };
    k_ = std::make_unique<Kernels>(Kernels{MipKernels(device), device.compile(shade_kernel, {.name = "shade_forward"})});
}

ForwardRenderer::~ForwardRenderer() = default;

void ForwardRenderer::build_mips(Stream& stream, const SceneData& scene, const Buffer<float>& params,
                                 const Buffer<float>& mips) {
    k_->mips.build(stream, scene.mip_table, params, mips);
}

void ForwardRenderer::shade(Stream& stream, const SceneData& scene, uint32_t view, const Buffer<gpu::Surface>& surfaces,
                            const Buffer<float>& params, const Buffer<float>& mips, const Buffer<float4>& image) {
    const auto& v = scene.views.at(view);
    stream << k_->shade(surfaces, params, mips, scene.materials, scene.textures, scene.levels, image, v.eye,
                        scene.background)
                  .dispatch(v.width, v.height);
}

} // namespace adjoint::app
