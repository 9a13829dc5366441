// SceneRenderer: upload, rasterize each view once, then shade on demand.
#include <adjoint/app/renderer.h>

#include "forward.h"

namespace adjoint::app {

struct RenderStages {
    Device& device;
    Stream stream;
    SceneData data;
    ForwardRenderer forward;
    std::vector<Buffer<gpu::Surface>> surfaces;   // per view
    Buffer<float> params;

    RenderStages(Device& d, const Scene& scene)
        : device(d), stream(d.create_stream()), data(upload_scene(d, stream, scene)), forward(d, data) {
        Rasterizer raster(d);
        for (uint32_t v = 0; v < data.views.size(); ++v) {
            const auto& view = data.views[v];
            auto gb = raster.rasterize(stream, data.geometry, view);
            surfaces.push_back(d.create_buffer<gpu::Surface>(size_t(view.width) * view.height));
            raster.interpolate(stream, data.geometry, view, gb, surfaces.back());
            stream << synchronize();
        }
        auto values = gather_values(scene, data.layout);
        params = d.create_buffer<float>(std::max<size_t>(values.size(), 1));
        if (!values.empty()) stream << params.copy_from(values.data());
        forward.build_mips(stream, data, params);
        stream << synchronize();
    }
};

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
    s_->forward.shade(s_->stream, s_->data, view, s_->surfaces[view], s_->params, image);
    s_->stream << image.copy_to(out.texels.data()) << synchronize();
    return out;
}

void SceneRenderer::render(uint32_t view, const Buffer<float4>& out) {
    const auto& v = s_->data.views.at(view);
    if (out.size() != size_t(v.width) * v.height)
        fail("SceneRenderer::render: view ", view, " is ", v.width, "x", v.height, ", the buffer holds ", out.size(),
             " texels");
    s_->forward.shade(s_->stream, s_->data, view, s_->surfaces[view], s_->params, out);
    s_->stream << synchronize();
}

} // namespace adjoint::app
