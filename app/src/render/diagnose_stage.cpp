// The --diagnose kernels (diagnose_stage.h): the shade and antialias stages' backward code with traced reads.
#include "render/diagnose_stage.h"

#include "render/antialias_dsl.h"
#include "render/diagnose_dsl.h"
#include "render/geometry_dsl.h"
#include "render/shadow_dsl.h"

namespace adjoint::app {

using gpu::kNone;

namespace {

// The shade stage's backward (shade_stage.cpp), seeded the same way; textures detached, their samples traced.
// With antialiasing the colour's gradient is dfinal plus the blends' share (color_grad): DynamicRenderer.
auto shade_kernel(const ShadingPlan& groups, bool geometry, bool antialias) {
    ShadingPlan plan = groups;
    plan.material_texture_gradients = plan.light_texture_gradients = false;
    return Kernel2D([plan, geometry, antialias](BufferUInt tri_ids, BufferVar<gpu::ViewRec> views, UInt view,
                                     BufferFloat3 positions, BufferFloat3 normals, BufferFloat3 colors,
                                     BufferFloat2 uvs, BufferVar<uint3> triangles, BufferUInt triangle_material,
                                     BufferFloat params, BufferUInt param_slot, BufferUInt texture_slot,
                                     BufferFloat directions, TextureSetFloat3 textures,
                                     BufferVar<gpu::Material> materials, BufferVar<LightSlots> lights,
                                     BufferFloat color_grad, BufferFloat dfinal, BufferFloat out,
                                     BufferFloat grid_head,
                                     BufferUInt grid_slot, BufferUInt grid_cells, BufferUInt grid_list) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x, pixels = dispatch_size().x * dispatch_size().y;
        UInt tri = tri_ids.read(at);
        $if (tri != kNone) {
            Float3 g = read3(color_grad, 4u * at);
            if (antialias) g = g + read3(dfinal, 4u * at);
            $autodiff {
                DiagnoseDeltas d;
                mark_deltas(d);
                TracedParams tp{params, param_slot, d};
                TracedVertices pos{positions, directions, 0u, d, geometry}, nrm{normals, directions, 1u, d, geometry},
                    col{colors, directions, 2u, d, geometry};
                DslCamera cam = camera_of(tp, views.read(view));
                auto vin = vertex_inputs(plan, pos, nrm, col, uvs, triangles, triangle_material);
                auto s = surface_at(vin, cam, tri, pix);
                ShadeInputs<TracedParams> in{tp, textures, materials, lights,
                                             shadow_hook(plan, pos, positions, triangles,
                                                         shadow_grid_ref(plan, grid_head, grid_slot, grid_cells,
                                                                         grid_list),
                                                         cam),
                                             [&](const UInt& t, const Float3& c) -> Float3 {
                                                 return traced_sample(texture_slot, d, t, c);
                                             }};
                adjoint::backward(dot(shade_surface(in, plan, s.load(), cam.eye), g));
                add_slots(out, d, at, pixels);
            };
        };
    });
}

// The antialias stage's backward (antialias_stage.cpp) with the colours held: the blends' gradients through
// the edge vertices and the camera; the colours' share reached the shading's seed already.
auto antialias_kernel(bool geometry) {
    return Kernel2D([geometry](BufferFloat4 colors, BufferUInt tri_ids, BufferFloat depth, BufferFloat3 positions,
                               BufferVar<uint3> triangles, BufferVar<uint3> opposite, BufferVar<uint3> neighbor,
                               BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params, BufferUInt param_slot,
                               BufferFloat directions, BufferFloat dfinal, BufferFloat out) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        UInt at = pix.y * width + pix.x, pixels = width * height;
        auto vr = views.read(view);
        DslCamera plain_cam = camera_of(params, vr);
        AntialiasInputs<BufferFloat3> plain{positions, positions, triangles, opposite, neighbor, tri_ids, depth,
                                            width};
        PairEdge edges[2];
        for (int k = 0; k < 2; ++k) {
            $if (k == 0 ? pix.x + 1u < width : pix.y + 1u < height) {
                edges[k] = pair_edge(plain, plain_cam, pix, k == 0 ? make_uint2(pix.x + 1u, pix.y)
                                                                   : make_uint2(pix.x, pix.y + 1u));
            };
        }
        $if ((edges[0].found == 1u) | (edges[1].found == 1u)) {
            out.write(kDiagnoseSlots * pixels + at, 1.0f);
            $autodiff {
                DiagnoseDeltas d;
                mark_deltas(d);
                TracedParams tp{params, param_slot, d};
                TracedVertices pos{positions, directions, 0u, d, geometry};
                AntialiasInputs<TracedVertices> in{pos, positions, triangles, opposite, neighbor, tri_ids, depth,
                                                   width};
                DslCamera cam = camera_of(tp, vr);
                Float total = 0.0f;
                for (int k = 0; k < 2; ++k) {
                    UInt target = kNone;
                    Float4 delta = make_float4(0.0f);
                    pair_delta(in, cam, edges[k], colors.read(edges[k].ii), colors.read(edges[k].io), target,
                               delta);
                    $if (target != kNone) { total = total + dot(delta, read4(dfinal, 4u * target)); };
                }
                adjoint::backward(total);
                add_slots(out, d, at, pixels);
            };
        };
    });
}

} // namespace

DiagnoseStage::DiagnoseStage(Device& device, const ShadingPlan& groups, bool antialias, bool geometry)
    : shade_(device.compile(shade_kernel(groups, geometry, antialias), {.name = "diagnose_shade"})),
      geometry(geometry) {
    if (antialias) antialias_.emplace(device.compile(antialias_kernel(geometry), {.name = "diagnose_antialias"}));
}

void DiagnoseStage::run(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gb,
                        const Buffer<float>& params, const Buffer<float>& color_grad, const Buffer<float4>* unblended,
                        const Buffer<float>& dfinal, const DiagnoseBuffers& d) const {
    const auto& g = b.data.geometry;
    const auto& w = b.world;
    stream << d.out.fill_zero()
           << shade_(gb.triangle, b.views, view, w.positions.value, w.normals.value,
                                                      w.colors.value, g.uvs, g.triangles, g.triangle_material, params,
                                                      d.param_slot, d.texture_slot, d.directions, b.data.textures,
                                                      b.data.materials, b.data.lights, color_grad, dfinal, d.out,
                                                      b.shadow_grid.head, b.shadow_grid.slot, b.shadow_grid.cells,
                                                      b.shadow_grid.list)
                  .dispatch(gb.width, gb.height);
    if (!antialias_) return;
    if (!unblended) fail("DiagnoseStage::run: antialiasing needs the shaded image before its blends");
    stream << (*antialias_)(*unblended, gb.triangle, gb.depth, w.positions.value,
                                                              g.triangles, b.tables.opposite, b.tables.neighbor,
                                                              b.views, view, params, d.param_slot, d.directions,
                                                              dfinal, d.out)
                  .dispatch(gb.width, gb.height);
}

} // namespace adjoint::app
