// SceneRenderer: upload, rasterize each view once, then shade on demand; antialiased and soft scenes, and
// scenes with shadows, go through the dynamic renderer (which rasterizes per render).
#include <adjoint/app/renderer.h>

#include "dynamic.h"
#include "forward.h"

namespace adjoint::app {

struct RenderStages {
    Device& device;
    Stream stream;
    SceneData data;
    ForwardRenderer forward;
    std::vector<SurfaceBuffers> surfaces;   // per view (hard visibility)
    std::unique_ptr<DynamicRenderer> dynamic;     // the other modes
    std::vector<Camera> cameras;
    Buffer<float> params;

    RenderStages(Device& d, const Scene& scene)
        : device(d), stream(d.create_stream()), data(upload_scene(d, stream, scene)), forward(d, data),
          cameras(scene.views) {
        if (scene.render.visibility != Visibility::hard || data.shading.shadow.any)
            dynamic = std::make_unique<DynamicRenderer>(d, stream, scene, data,
                                                        DynamicOptions{scene.render.visibility, false});
        Rasterizer raster(d);
        for (uint32_t v = 0; v < data.views.size() && !dynamic; ++v) {
            const auto& view = data.views[v];
            auto gb = raster.rasterize(stream, data.geometry, view);
            surfaces.emplace_back(d, size_t(view.width) * view.height, data.geometry.tangents);
            raster.interpolate(stream, data.geometry, view, gb, surfaces.back());
            stream << synchronize();
        }
        auto values = gather_values(scene, data.layout);
        params = d.create_buffer<float>(std::max<size_t>(values.size(), 1));
        if (!values.empty()) stream << params.copy_from(values.data());
        forward.build_mips(stream, data, params);
        if (dynamic) dynamic->update_geometry(stream, params);
        stream << synchronize();
    }

    void shade(uint32_t view, const Buffer<float4>& out) {
        if (dynamic)
            dynamic->render(stream, view, cameras.at(view), params, out);
        else
            forward.shade(stream, data, view, surfaces[view], params, out);
    }
};

std::vector<SurfaceSample> rasterize_view(Device& device, const Scene& scene, uint32_t view) {
    check_scene_fits(device, scene);
    if (view >= scene.views.size()) fail("rasterize_view: view ", view, " does not exist");
    Stream stream = device.create_stream();
    SceneData data = upload_scene(device, stream, scene);
    Rasterizer raster(device);
    const auto& v = data.views[view];
    const size_t n = size_t(v.width) * v.height;
    auto gb = raster.rasterize(stream, data.geometry, v);
    SurfaceBuffers surfaces(device, n, data.geometry.tangents);
    raster.interpolate(stream, data.geometry, v, gb, surfaces);
    std::vector<gpu::SurfaceRecord> s(n);
    stream << surfaces.records.copy_to(s.data()) << synchronize();
    std::vector<SurfaceSample> out(n);
    for (size_t i = 0; i < n; ++i)
        if (s[i].material != gpu::kNone) out[i] = {true, s[i].position, s[i].normal, s[i].uv};
    return out;
}

SceneRenderer::SceneRenderer(Device& device, const Scene& scene) {
    check_scene_fits(device, scene);
    s_ = std::make_unique<RenderStages>(device, scene);
}
SceneRenderer::~SceneRenderer() = default;
SceneRenderer::SceneRenderer(SceneRenderer&&) noexcept = default;

uint32_t SceneRenderer::view_count() const { return uint32_t(s_->data.views.size()); }

LinearImage SceneRenderer::render(uint32_t view) {
    const auto& v = s_->data.views.at(view);
    auto image = s_->device.create_buffer<float4>(size_t(v.width) * v.height);
    LinearImage out;
    out.width = v.width;
    out.height = v.height;
    out.texels.resize(size_t(v.width) * v.height);
    s_->shade(view, image);
    s_->stream << image.copy_to(out.texels.data()) << synchronize();
    return out;
}

void SceneRenderer::render(uint32_t view, const Buffer<float4>& out) {
    const auto& v = s_->data.views.at(view);
    if (out.size() != size_t(v.width) * v.height)
        fail("SceneRenderer::render: view ", view, " is ", v.width, "x", v.height, ", the buffer holds ", out.size(),
             " texels");
    s_->shade(view, out);
    s_->stream << synchronize();
}

} // namespace adjoint::app
