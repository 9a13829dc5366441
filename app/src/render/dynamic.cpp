// DynamicRenderer: the vertex stage, rasterization per render, differentiable surfaces, shading,
// silhouette antialiasing and soft rasterization, forward and backward kernels.
#include "dynamic.h"

#include "antialias_dsl.h"
#include "soft_dsl.h"

#include <adjoint/core/error.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace adjoint::app {

using gpu::kNone;

namespace {

// The per-pixel loss of the optimization (mean over pixels and channels comes from `scale`).
Float pixel_loss(Loss loss, const Float4& c, const Float4& t) {
    Float4 d = c - t;
    switch (loss) {
    case Loss::l1: return abs(d.x) + abs(d.y) + abs(d.z);
    case Loss::silhouette: return d.w * d.w;
    case Loss::l2: break;
    }
    return d.x * d.x + d.y * d.y + d.z * d.z;
}

struct DynamicKernels {
    Shader<2> shade_forward, shade_backward, loss;
    std::optional<Shader<2>> antialias_forward, antialias_backward;
    std::optional<Shader<2>> soft_select, soft_forward, soft_backward;
};

DynamicKernels record_kernels(Device& device, const std::vector<ShadeLight>& lights, const DynamicOptions& options) {
    const bool camera_free = options.camera_free;
    const Loss loss_kind = options.loss;

    Kernel2D shade_fwd = [lights](BufferUInt tri_ids, BufferVar<gpu::ViewRec> views, UInt view,
                                  BufferFloat3 positions, BufferFloat3 normals, BufferFloat3 colors, BufferFloat2 uvs,
                                  BufferVar<uint3> triangles, BufferUInt triangle_material, BufferFloat params,
                                  TextureSetFloat3 textures, BufferVar<gpu::Material> materials, BufferFloat4 out,
                                  Float3 background) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt tri = tri_ids.read(at);
        Float4 c = make_float4(background, 0.0f);
        $if (tri != kNone) {
            DslCamera cam = camera_of(params, views.read(view));
            VertexInputs<BufferFloat3> vin{positions, normals, colors, uvs, triangles, triangle_material};
            auto s = surface_at(vin, cam, tri, pix);
            ShadeInputs<BufferFloat> in{params, textures, materials};
            c = make_float4(shade_surface(in, lights, s.load(), cam.eye), 1.0f);
        };
        out.write(at, c);
    };
    Kernel2D shade_bwd = [lights, camera_free](BufferUInt tri_ids, BufferVar<gpu::ViewRec> views, UInt view,
                                               DiffBufferFloat3 positions, DiffBufferFloat3 normals,
                                               DiffBufferFloat3 colors, BufferFloat2 uvs, BufferVar<uint3> triangles,
                                               BufferUInt triangle_material, DiffBufferFloat params,
                                               BufferFloat params_value, TextureSetFloat3 textures,
                                               BufferVar<gpu::Material> materials, BufferFloat color_grad) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt tri = tri_ids.read(at);
        $if (tri != kNone) {
            Float3 g = read3(color_grad, 4u * at);
            $autodiff {
                auto vr = views.read(view);
                DslCamera cam = camera_free ? camera_of(params, vr) : camera_of(params_value, vr);
                VertexInputs<DiffBufferFloat3> vin{positions, normals, colors, uvs, triangles, triangle_material};
                auto s = surface_at(vin, cam, tri, pix);
                ShadeInputs<DiffBufferFloat> in{params, textures, materials};
                adjoint::backward(dot(shade_surface(in, lights, s.load(), cam.eye), g));
            };
        };
    };
    // Gather form: a pixel adds the blends of its four pairs that change it.
    Kernel2D aa_fwd = [](BufferFloat4 colors, BufferUInt tri_ids, BufferFloat2 bary, BufferFloat3 positions,
                         BufferVar<uint3> triangles, BufferVar<uint3> opposite, BufferVar<uint3> neighbor,
                         BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params, BufferFloat4 out) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        UInt at = pix.y * width + pix.x;
        Float4 c = colors.read(at);
        DslCamera cam = camera_of(params, views.read(view));
        AntialiasInputs<BufferFloat3, BufferFloat4> in{positions, positions, triangles, opposite, neighbor,
                                                       colors, tri_ids, bary, width};
        const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
        for (int k = 0; k < 4; ++k) {
            Bool inside = dx[k] < 0 ? pix.x > 0u : dx[k] > 0 ? pix.x + 1u < width : dy[k] < 0 ? pix.y > 0u
                                                                                           : pix.y + 1u < height;
            $if (inside) {
                UInt2 n = make_uint2(cast<uint32_t>(cast<int>(pix.x) + dx[k]), cast<uint32_t>(cast<int>(pix.y) + dy[k]));
                bool before = dx[k] < 0 || dy[k] < 0;
                UInt target = kNone;
                Float4 delta = make_float4(0.0f);
                pair_delta(in, cam, pair_edge(in, cam, before ? n : pix, before ? pix : n), target, delta);
                $if (target == at) { c = c + delta; };
            };
        }
        out.write(at, c);
    };
    // Scatter form: a pixel differentiates its right and lower pairs, each seeded with d loss / d the
    // pixel the pair changes.
    Kernel2D aa_bwd = [camera_free](DiffBufferFloat4 colors, BufferUInt tri_ids, BufferFloat2 bary,
                                    DiffBufferFloat3 positions, BufferFloat3 positions_value,
                                    BufferVar<uint3> triangles, BufferVar<uint3> opposite,
                                    BufferVar<uint3> neighbor, BufferVar<gpu::ViewRec> views, UInt view,
                                    DiffBufferFloat params, BufferFloat params_value, BufferFloat4 dfinal) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        auto vr = views.read(view);
        DslCamera plain_cam = camera_of(params_value, vr);
        AntialiasInputs<DiffBufferFloat3, DiffBufferFloat4> in{positions, positions_value, triangles, opposite,
                                                                 neighbor, colors, tri_ids, bary, width};
        // Which edges, on plain values; then the blends inside $autodiff.
        PairEdge edges[2];
        for (int k = 0; k < 2; ++k) {
            $if (k == 0 ? pix.x + 1u < width : pix.y + 1u < height) {
                edges[k] = pair_edge(in, plain_cam, pix, k == 0 ? make_uint2(pix.x + 1u, pix.y)
                                                                : make_uint2(pix.x, pix.y + 1u));
            };
        }
        $if ((edges[0].found == 1u) | (edges[1].found == 1u)) {
            $autodiff {
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                Float total = 0.0f;
                for (int k = 0; k < 2; ++k) {
                    UInt target = kNone;
                    Float4 delta = make_float4(0.0f);
                    pair_delta(in, cam, edges[k], target, delta);
                    $if (target != kNone) { total = total + dot(delta, dfinal.read(target)); };
                }
                adjoint::backward(total);
            };
        };
    };
    // Soft rasterization (soft_dsl.h): each pixel first lists the triangles of its tile within reach, then
    // blends them.
    Kernel2D soft_select_kernel = [](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list, UInt tiles_x,
                                     BufferVar<gpu::TriSetup> setups, BufferUInt pixel_count, UInt own_base,
                                     UInt capacity, Float reach_px) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt tile_at = tile_of(pix, tiles_x);
        UInt begin = tile_offset.read(tile_at);
        UInt end = begin + tile_count.read(tile_at);
        pixel_count.write(at, soft_select(setups, list, begin, end, own_base + at * capacity, capacity, reach_px, pix));
    };
    Kernel2D soft_fwd = [lights](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list, UInt tiles_x,
                                 BufferUInt pixel_count, UInt own_base, UInt capacity, BufferVar<gpu::ViewRec> views,
                                 UInt view, BufferFloat3 positions, BufferFloat3 normals, BufferFloat3 colors,
                                 BufferFloat2 uvs, BufferVar<uint3> triangles, BufferUInt triangle_material,
                                 BufferFloat params, TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                 BufferFloat4 out, Float3 background, Float sigma, Float gamma, Float reach2) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        SoftTile tile = soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count, own_base, capacity, pix);
        auto vr = views.read(view);
        SoftSettings st{sigma, gamma, reach2, vr.near, vr.far};
        DslCamera cam = camera_of(params, vr);
        VertexInputs<BufferFloat3> vin{positions, normals, colors, uvs, triangles, triangle_material};
        ShadeInputs<BufferFloat> in{params, textures, materials};
        Float m = soft_max_log_weight(vin, cam, st, tile, pix);
        out.write(at, soft_pixel(vin, in, lights, cam, st, tile, pix, m, background));
    };
    // The same pixel inside $autodiff, seeded with d loss / d the pixel.
    Kernel2D soft_bwd = [lights, camera_free](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list,
                                              UInt tiles_x, BufferUInt pixel_count, UInt own_base, UInt capacity,
                                              BufferVar<gpu::ViewRec> views, UInt view, DiffBufferFloat3 positions,
                                              DiffBufferFloat3 normals, DiffBufferFloat3 colors, BufferFloat2 uvs,
                                              BufferVar<uint3> triangles, BufferUInt triangle_material,
                                              DiffBufferFloat params, BufferFloat params_value,
                                              TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                              BufferFloat4 dfinal, Float3 background, Float sigma, Float gamma,
                                              Float reach2) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        SoftTile tile = soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count, own_base, capacity, pix);
        Float4 g = dfinal.read(at);
        $if ((tile.end > tile.begin) & (dot(abs(g), make_float4(1.0f)) > 0.0f)) {
            auto vr = views.read(view);
            SoftSettings st{sigma, gamma, reach2, vr.near, vr.far};
            DslCamera plain_cam = camera_of(params_value, vr);
            VertexInputs<DiffBufferFloat3> vin{positions, normals, colors, uvs, triangles, triangle_material};
            Float m = soft_max_log_weight(vin, plain_cam, st, tile, pix);   // plain reads: outside $autodiff
            $autodiff {
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                ShadeInputs<DiffBufferFloat> in{params, textures, materials};
                adjoint::backward(dot(soft_pixel(vin, in, lights, cam, st, tile, pix, m, background), g));
            };
        };
    };
    Kernel2D loss_kernel = [loss_kind](BufferFloat4 final_image, BufferFloat4 target, BufferFloat loss_px,
                                       BufferFloat sqerr_px, UInt out_base, BufferFloat4 dfinal,
                                       BufferFloat color_grad, Float scale) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        Float4 t = target.read(at);
        Float4 f = final_image.read(at);
        Float value = 0.0f;
        Float4 g = make_float4(0.0f);
        $autodiff {
            requires_grad(f);
            Float l = pixel_loss(loss_kind, f, t);
            adjoint::backward(l * scale);
            value = l;
            g = grad(f);
        };
        loss_px.write(out_base + at, value);
        Float3 e = saturate(f.xyz()) - saturate(t.xyz());
        sqerr_px.write(out_base + at, dot(e, e));
        dfinal.write(at, g);
        color_grad.write(4u * at, g.x);
        color_grad.write(4u * at + 1u, g.y);
        color_grad.write(4u * at + 2u, g.z);
        color_grad.write(4u * at + 3u, g.w);
    };
    DynamicKernels k{device.compile(shade_fwd, {.name = "dynamic_shade_forward"}),
                     device.compile(shade_bwd, {.name = "dynamic_shade_backward"}),
                     device.compile(loss_kernel, {.name = "dynamic_loss"}), std::nullopt, std::nullopt,
                     std::nullopt, std::nullopt, std::nullopt};
    if (options.visibility == Visibility::antialias) {
        k.antialias_forward = device.compile(aa_fwd, {.name = "antialias_forward"});
        k.antialias_backward = device.compile(aa_bwd, {.name = "antialias_backward"});
    }
    if (options.visibility == Visibility::soft) {
        k.soft_select = device.compile(soft_select_kernel, {.name = "soft_select"});
        k.soft_forward = device.compile(soft_fwd, {.name = "soft_forward"});
        k.soft_backward = device.compile(soft_bwd, {.name = "soft_backward"});
    }
    return k;
}

} // namespace

struct DynamicRenderer::State {
    Device& device;
    const SceneData& data;
    DynamicOptions options;
    GeometryStage geometry;
    Rasterizer raster;
    WorldVertices world;
    DeviceGeometry raster_geometry;   // world positions + the scene's topology, for the rasterizer
    Buffer<gpu::ViewRec> views;
    DiffBuffer<float4> color;         // the shaded image before antialiasing, and d loss / d it
    Buffer<float4> dfinal;            // d loss / d final image
    GBuffer gbuffer;                  // of the last render() (hard and antialias)
    TileBins bins;                    // of the last render() (soft)
    Buffer<uint32_t> pixel_count;     // soft: each pixel's candidates (soft_select), of the last render()
    uint32_t capacity = 0;            // soft: room for candidates per pixel
    float sigma = 0, gamma = 0, reach2 = 0;   // soft: reach2 = soft_reach2(sigma), NDC units
    uint32_t width = 0, height = 0;   // of the last render()
    uint32_t last_view = kNone;
    DynamicKernels k;

    State(Device& d, Stream& stream, const Scene& scene, const SceneData& sd, const DynamicOptions& o)
        : device(d), data(sd), options(o),
          geometry(d, stream, scene, sd.layout, o.laplacian, o.edge_length), raster(d),
          sigma(scene.render.soft_sigma), gamma(scene.render.soft_gamma),
          reach2(soft_reach2(scene.render.soft_sigma)), k(record_kernels(d, sd.lights, o)) {
        const uint32_t n = std::max(geometry.vertex_count(), 1u);
        world = {d.create_diff_buffer<float3>(n), d.create_diff_buffer<float3>(n), d.create_diff_buffer<float3>(n)};
        raster_geometry = sd.geometry;
        raster_geometry.positions = world.positions.value;
        raster_geometry.normals = world.normals.value;
        raster_geometry.colors = world.colors.value;
        std::vector<gpu::ViewRec> recs;
        for (size_t v = 0; v < scene.views.size(); ++v) {
            const Camera& c = scene.views[v];
            const uint32_t view = uint32_t(v);
            recs.push_back({c.up, sd.layout.at(ParameterKind::camera_eye, view), sd.layout.at(ParameterKind::camera_target, view),
                            sd.layout.at(ParameterKind::camera_fov_y, view), c.near, c.far,
                            float(c.width), float(c.height)});
        }
        views = d.create_buffer<gpu::ViewRec>(recs.size());
        stream << views.copy_from(recs.data()) << synchronize();
        const size_t pixels = size_t(scene.views[0].width) * scene.views[0].height;
        color = d.create_diff_buffer<float4>(pixels);
        dfinal = d.create_buffer<float4>(pixels);
        if (o.visibility == Visibility::soft) {
            // Room for up to 256 candidates a pixel, in at most 2^24 entries (64 MiB, half of what a storage
            // buffer may hold on lavapipe): 256 up to 256x256, 64 at 512x512, 16 at 1024x1024.
            capacity = o.soft_candidates ? o.soft_candidates
                                         : uint32_t(std::min<size_t>(256, (size_t(1) << 24) / std::max<size_t>(pixels, 1)));
            pixel_count = d.create_buffer<uint32_t>(pixels);
        }
    }

};

DynamicRenderer::DynamicRenderer(Device& device, Stream& stream, const Scene& scene, const SceneData& data,
                                 const DynamicOptions& options) {
    s_ = std::make_unique<State>(device, stream, scene, data, options);
}

DynamicRenderer::~DynamicRenderer() = default;

const GeometryStage& DynamicRenderer::geometry() const { return s_->geometry; }

void DynamicRenderer::update_geometry(Stream& stream, const Buffer<float>& params) {
    s_->geometry.forward(stream, params, s_->world);
}

void DynamicRenderer::render(Stream& stream, uint32_t view, const Camera& camera, const Buffer<float>& params,
                             const Buffer<float4>& out) {
    auto& s = *s_;
    ViewCamera vc{view_projection_matrix(camera), camera.eye, camera.width, camera.height};
    s.last_view = view;
    s.width = camera.width;
    s.height = camera.height;
    const auto& g = s.data.geometry;
    if (s.options.visibility == Visibility::soft) {
        // The reach in pixels (NDC units are width / 2 pixels), and a slack for the rounding differences
        // between the binning's projection and the kernels' (both from the same camera values, about 1e-4
        // pixels apart): half a pixel for the tiles, a tenth for each pixel's candidates.
        const float reach_px = std::sqrt(s.reach2) * 0.5f * float(camera.width);
        const uint32_t pixels = camera.width * camera.height;
        s.bins = s.raster.bin(stream, s.raster_geometry, vc, reach_px + 0.5f, s.capacity * pixels);
        stream << (*s.k.soft_select)(s.bins.offset, s.bins.count, s.bins.list, s.bins.tiles_x, s.bins.setups,
                                     s.pixel_count, s.bins.reserved_at, s.capacity, reach_px + 0.1f)
                      .dispatch(camera.width, camera.height)
               << (*s.k.soft_forward)(s.bins.offset, s.bins.count, s.bins.list, s.bins.tiles_x, s.pixel_count,
                                      s.bins.reserved_at, s.capacity, s.views, view, s.world.positions.value,
                                      s.world.normals.value, s.world.colors.value, g.uvs, g.triangles,
                                      g.triangle_material, params, s.data.textures, s.data.materials, out,
                                      s.data.background, s.sigma, s.gamma, s.reach2)
                      .dispatch(camera.width, camera.height);
        return;
    }
    s.gbuffer = s.raster.rasterize(stream, s.raster_geometry, vc);
    const Buffer<float4>& shaded = s.options.visibility == Visibility::antialias ? s.color.value : out;
    stream << s.k.shade_forward(s.gbuffer.triangle, s.views, view, s.world.positions.value, s.world.normals.value,
                              s.world.colors.value, g.uvs, g.triangles, g.triangle_material, params, s.data.textures,
                              s.data.materials, shaded, s.data.background)
                  .dispatch(camera.width, camera.height);
    if (s.options.visibility == Visibility::antialias)
        stream << (*s.k.antialias_forward)(s.color.value, s.gbuffer.triangle, s.gbuffer.bary, s.world.positions.value,
                                      g.triangles, s.geometry.tables().opposite, s.geometry.tables().neighbor, s.views,
                                      view, params, out)
                      .dispatch(camera.width, camera.height);
}

void DynamicRenderer::backward(Stream& stream, uint32_t view, const DiffBuffer<float>& params,
                               const Buffer<float4>& final_image, const Buffer<float4>& target,
                               const Buffer<float>& loss_px, const Buffer<float>& sqerr_px, uint32_t out_base,
                               float scale) {
    auto& s = *s_;
    if (view != s.last_view) fail("DynamicRenderer::backward: view ", view, " was not the last one rendered");
    const uint32_t w = s.width, h = s.height;
    const auto& g = s.data.geometry;
    stream << s.k.loss(final_image, target, loss_px, sqerr_px, out_base, s.dfinal, s.color.grad, scale).dispatch(w, h);
    if (s.options.visibility == Visibility::soft) {
        stream << (*s.k.soft_backward)(s.bins.offset, s.bins.count, s.bins.list, s.bins.tiles_x, s.pixel_count,
                                       s.bins.reserved_at, s.capacity, s.views, view, s.world.positions,
                                       s.world.normals, s.world.colors, g.uvs, g.triangles, g.triangle_material,
                                       params, params.value, s.data.textures, s.data.materials, s.dfinal,
                                       s.data.background, s.sigma, s.gamma, s.reach2)
                      .dispatch(w, h);
        return;
    }
    if (s.options.visibility == Visibility::antialias)
        stream << (*s.k.antialias_backward)(s.color, s.gbuffer.triangle, s.gbuffer.bary, s.world.positions,
                                       s.world.positions.value, g.triangles, s.geometry.tables().opposite,
                                       s.geometry.tables().neighbor, s.views, view, params, params.value, s.dfinal)
                      .dispatch(w, h);
    stream << s.k.shade_backward(s.gbuffer.triangle, s.views, view, s.world.positions, s.world.normals, s.world.colors,
                               g.uvs, g.triangles, g.triangle_material, params, params.value, s.data.textures,
                               s.data.materials, s.color.grad)
                  .dispatch(w, h);
}

void DynamicRenderer::zero_grad(Stream& stream) {
    stream << s_->world.positions.zero_grad() << s_->world.normals.zero_grad() << s_->world.colors.zero_grad();
}

void DynamicRenderer::geometry_backward(Stream& stream, const DiffBuffer<float>& params, const Buffer<float>& reg_loss) {
    s_->geometry.backward(stream, params, s_->world);
    s_->geometry.regularize(stream, params, reg_loss);
}

} // namespace adjoint::app
