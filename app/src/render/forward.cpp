// Forward rendering: mip chains and shading (no gradients).
#include "forward.h"

#include "environment_stage.h"
#include "geometry_dsl.h"

namespace adjoint::app {

struct ForwardRenderer::Kernels {
    Shader<2> shade;
    EnvironmentStage environment;
};

ForwardRenderer::ForwardRenderer(Device& device, const SceneData& scene) {
    ShadingPlan groups = scene.shading;
    Kernel2D shade_kernel = [groups](BufferVar<gpu::SurfaceRecord> surfaces, BufferFloat4 tangents, BufferFloat params,
                                     TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                     BufferVar<LightSlots> lights, BufferFloat4 image, Float3 eye,
                                     Float3 background, BufferVar<gpu::ViewRec> views, UInt view) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        auto s = stored_surface(surfaces, tangents, at, groups).load();
        ShadeInputs<BufferFloat> in{params, textures, materials, lights};
        Float3 c;
        $if (s.material != gpu::kNone) { c = shade_surface(in, groups, s, eye); }
        $else {
            c = background_at(in, groups, background,
                              [&] { return camera_of(params, views.read(view)).ray(pixel_centre(pix)); });
        };
        image.write(at, make_float4(c, 1.0f));
    };
    k_ = std::make_unique<Kernels>(
        Kernels{device.compile(shade_kernel, {.name = "shade_forward"}), EnvironmentStage(device, scene)});
}

ForwardRenderer::~ForwardRenderer() = default;

void ForwardRenderer::build_mips(Stream& stream, const SceneData& scene, const Buffer<float>& params) {
    constexpr ParameterKind texture = ParameterKind::material_texture;
    for (uint32_t t = 0; t < scene.layout.elements(texture); ++t)
        if (!built_ || scene.texture_varies.at(t))
            stream << scene.textures.build_mips_from(t, params, scene.layout.at(texture, t));
    built_ = true;
    k_->environment.forward(stream, scene);
}

void ForwardRenderer::backward_mips(Stream& stream, const SceneData& scene, const Buffer<float>& grad) {
    k_->environment.backward(stream, scene);   // before the map's own mip chain carries it to level 0
    constexpr ParameterKind texture = ParameterKind::material_texture;
    for (uint32_t t = 0; t < scene.layout.elements(texture); ++t)
        if (scene.texture_varies.at(t)) stream << scene.textures.backward_mips_to(t, grad, scene.layout.at(texture, t));
}

void ForwardRenderer::shade(Stream& stream, const SceneData& scene, uint32_t view, const SurfaceBuffers& surfaces,
                            const Buffer<float>& params, const Buffer<float4>& image) {
    const auto& v = scene.views.at(view);
    stream << k_->shade(surfaces.records, surfaces.tangents, params, scene.textures, scene.materials, scene.lights, image, v.eye, scene.background,
                        scene.view_recs, view)
                  .dispatch(v.width, v.height);
}

} // namespace adjoint::app
