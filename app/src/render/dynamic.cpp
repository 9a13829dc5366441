// DynamicRenderer: the dynamic chain of stages (vertex -> rasterize -> shade -> antialias, or vertex -> soft)
// over the world-space buffers they share, forward and backward.
#include "dynamic.h"

#include "render/antialias_stage.h"
#include "render/diagnose_stage.h"
#include "render/shade_stage.h"
#include "render/shadow_grid.h"
#include "render/soft_diagnose.h"
#include "render/soft_stage.h"

#include <adjoint/core/error.h>

#include <algorithm>
#include <optional>

namespace adjoint::app {

using gpu::kNone;

namespace {

} // namespace

struct DynamicRenderer::State {
    const SceneData& data;
    DynamicOptions options;
    GeometryStage geometry;           // the vertex stage
    Rasterizer raster;
    WorldVertices world;
    DeviceGeometry raster_geometry;   // world positions + the scene's topology, for the rasterizer
    Buffer<gpu::ViewRec> views;
    ShadowGrid shadow_grid;           // rebuilt for each render() (scenes with shadows)
    StageBuffers buffers;
    std::optional<ShadeStage> shade;            // hard and antialias
    std::optional<AntialiasStage> antialias;
    std::optional<SoftStage> soft;
    std::optional<DiagnoseStage> diagnose;      // compiled on the first diagnose() (hard and antialias)
    std::optional<SoftDiagnoseStage> soft_diagnose;   // compiled on the first diagnose() (soft)
    Buffer<float> color_grad;         // d loss / d the shaded image before antialiasing, 4 floats a pixel
    // The shaded image before antialiasing, only where a diagnosis needs it (the antialias stage blends the rendered
    // image in place): allocated by the first diagnose() with antialiasing.
    std::optional<Buffer<float4>> unblended;
    // d loss / d final image, 4 floats a pixel (image_gradient()): without antialiasing, the shaded image's
    // gradient itself, which the shading's backward reads; with it, its own buffer, and color_grad takes only
    // the blends' share (antialiasing's backward adds it to a zeroed buffer; the shading reads both: the
    // blends change a few percent of the pixels, so no full copy of dfinal is made).
    Buffer<float> dfinal;
    GBuffer gbuffer;                  // of the last render() (hard and antialias)
    uint32_t width = 0, height = 0;   // of the last render()
    uint32_t last_view = kNone;

    State(Device& d, Stream& stream, const Scene& scene, const SceneData& sd, const DynamicOptions& o)
        : data(sd), options(o), geometry(d, stream, scene, sd.layout), raster(d),
          views(upload(d, stream, view_records(scene, sd.layout))), shadow_grid(d, stream, sd),
          buffers{sd, world, views, geometry.tables(), shadow_grid.buffers()} {
        const uint32_t n = std::max(geometry.vertex_count(), 1u);
        world = {d.create_diff_buffer<float3>(n), d.create_diff_buffer<float3>(n), d.create_diff_buffer<float3>(n)};
        raster_geometry = sd.geometry;
        raster_geometry.positions = world.positions.value;
        raster_geometry.normals = world.normals.value;
        raster_geometry.colors = world.colors.value;
        const uint32_t pixels = scene.views[0].width * scene.views[0].height;
        if (o.visibility != Visibility::soft) color_grad = d.create_buffer<float>(4 * size_t(pixels));
        if (o.visibility == Visibility::soft) {
            soft.emplace(d, sd.shading, o.camera_free, scene.render, pixels, o.soft_candidates, o.soft_part,
                         o.soft_faces_in_memory);
        } else {
            shade.emplace(d, sd.shading, o.camera_free, o.visibility == Visibility::antialias);
            if (o.visibility == Visibility::antialias) antialias.emplace(d, o.camera_free, pixels);
        }
        dfinal = o.visibility == Visibility::hard ? color_grad : d.create_buffer<float>(4 * size_t(pixels));
        stream << synchronize();   // the view records' host vector goes out of scope
    }
};

DynamicRenderer::DynamicRenderer(Device& device, Stream& stream, const Scene& scene, const SceneData& data,
                                 const DynamicOptions& options) {
    s_ = std::make_unique<State>(device, stream, scene, data, options);
}

DynamicRenderer::~DynamicRenderer() = default;

const GeometryStage& DynamicRenderer::geometry() const { return s_->geometry; }

uint32_t DynamicRenderer::soft_parts() const { return s_->soft ? s_->soft->parts() : 1u; }
const Buffer<uint32_t>* DynamicRenderer::soft_candidates() const {
    return s_->soft ? &s_->soft->blend().pixel_count : nullptr;
}
const Buffer<uint32_t>* DynamicRenderer::soft_weighed() const { return s_->soft ? &s_->soft->weighed() : nullptr; }

void DynamicRenderer::update_geometry(Stream& stream, const Buffer<float>& params) {
    s_->geometry.forward(stream, params, s_->world);
}

void DynamicRenderer::render(Stream& stream, uint32_t view, const Camera& camera, const Buffer<float>& params,
                             const Buffer<float4>& out) {
    auto& s = *s_;
    // The camera from the parameter buffer (as every stage reads it), not from `camera`'s values.
    ViewCamera vc{view_projection_matrix(camera), camera.eye, camera.width, camera.height, &params, &s.views, view};
    s.last_view = view;
    s.width = camera.width;
    s.height = camera.height;
    s.shadow_grid.build(stream, s.buffers, view, params);
    if (s.soft) {
        s.soft->forward(stream, s.raster, s.raster_geometry, s.buffers, view, vc, params, out,
                        s.shadow_grid.point_loops());
        return;
    }
    s.gbuffer = s.raster.rasterize(stream, s.raster_geometry, vc);
    s.shade->forward(stream, s.buffers, view, s.gbuffer, params, out);
    if (s.antialias) s.antialias->forward(stream, s.buffers, view, s.gbuffer, params, out);   // in place
}

const Buffer<float>& DynamicRenderer::image_gradient() const { return s_->dfinal; }

void DynamicRenderer::backward(Stream& stream, uint32_t view, const DiffBuffer<float>& params) {
    auto& s = *s_;
    if (view != s.last_view) fail("DynamicRenderer::backward: view ", view, " was not the last one rendered");
    if (s.soft) {
        s.soft->backward(stream, s.buffers, view, params, s.dfinal);
        return;
    }
    if (s.antialias) {
        stream << s.color_grad.fill_zero();
        s.antialias->backward(stream, s.buffers, view, s.gbuffer, params, s.color_grad, s.dfinal);
        s.shade->backward(stream, s.buffers, view, s.gbuffer, params, s.dfinal, &s.color_grad);
    } else {
        s.shade->backward(stream, s.buffers, view, s.gbuffer, params, s.color_grad);
    }
}

void DynamicRenderer::diagnose(Device& device, Stream& stream, uint32_t view, const DiffBuffer<float>& params,
                               const DiagnoseBuffers& d) {
    auto& s = *s_;
    if (view != s.last_view) fail("DynamicRenderer::diagnose: view ", view, " was not the last one rendered");
    if (s.soft) {
        if (!s.soft_diagnose || s.soft_diagnose->geometry != d.geometry)
            s.soft_diagnose.emplace(device, s.data.shading, d.geometry);
        s.soft_diagnose->run(stream, s.buffers, view, *s.soft, params.value, s.dfinal, d);
        return;
    }
    if (!s.diagnose || s.diagnose->geometry != d.geometry)
        s.diagnose.emplace(device, s.data.shading, bool(s.antialias), d.geometry);
    if (s.antialias) {
        // The image was blended in place; the diagnosis walks every pair again and blends the shaded colours.
        if (!s.unblended) s.unblended = device.create_buffer<float4>(s.color_grad.size() / 4);   // the views' pixels
        s.shade->forward(stream, s.buffers, view, s.gbuffer, params.value, *s.unblended);
        stream << s.color_grad.fill_zero();
        s.antialias->backward(stream, s.buffers, view, s.gbuffer, params, s.color_grad, s.dfinal);
    }
    s.diagnose->run(stream, s.buffers, view, s.gbuffer, params.value, s.color_grad,
                    s.antialias ? &*s.unblended : nullptr, s.dfinal, d);
}

void DynamicRenderer::zero_grad(Stream& stream) {
    stream << s_->world.positions.zero_grad() << s_->world.normals.zero_grad() << s_->world.colors.zero_grad();
}

void DynamicRenderer::geometry_backward(Stream& stream, const DiffBuffer<float>& params) {
    s_->geometry.backward(stream, params, s_->world);
}

} // namespace adjoint::app
