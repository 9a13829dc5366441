// The --diagnose kernel of soft visibility (soft_diagnose.h): SoftStage's backward with traced reads, and the
// edge mask from a plain pass over the same part of the pixel's list (no shading: coverage and edges only).
#include "render/soft_diagnose.h"

#include "render/antialias_dsl.h"
#include "render/diagnose_dsl.h"
#include "render/shadow_dsl.h"
#include "render/soft_dsl.h"

namespace adjoint::app {

namespace {

// Whether the outline edge of fragment `f` nearest to the pixel is a silhouette edge, as the antialias walk
// tells one (antialias_dsl.h): no neighbour across it, or the neighbour's far vertex on the triangle's own side
// of the plane through the camera and the edge (folded behind: one faces the camera, the other away), from the
// homogeneous edge functions, which hold for a vertex behind the camera too. A clipped fragment's nearest edge
// may be the near plane's line, which no neighbour shares and which is no silhouette.
inline Bool nearest_edge_is_silhouette(const SoftFragment& f, const UInt& tri, const BufferFloat3& positions,
                                       const BufferVar<uint3>& opposite, const DslCamera& cam, const UInt2& pix) {
    UInt k = f.edge;
    $if (!f.clipped) {
        Outline o = outline_seen_from(pixel_centre(pix), f.q[0], f.q[1], f.q[2], f.area);
        // Edge k is opposite vertex k: the nearest point's barycentric k is 0 there.
        k = ite((o.nearest.x <= o.nearest.y) & (o.nearest.x <= o.nearest.z), 0u,
                ite(o.nearest.y <= o.nearest.z, 1u, 2u));
    };
    Bool silhouette = false;
    $if (k != 3u) {
        UInt x = pick(opposite.read(tri), k);
        silhouette = x == gpu::kNone;
        $if (!silhouette) {
            Float2 p = pixel_centre(pix);
            HomogeneousEdges h = homogeneous_edges(f.c[0], f.c[1], f.c[2], cam.width, cam.height, p);
            Float3 e = ite(k == 0u, h.e0, ite(k == 1u, h.e1, h.e2));
            silhouette = dot(e, homogeneous_pixel(cam.clip(positions.read(x)), cam.width, cam.height, p)) > 0.0f;
        };
    };
    return silhouette;
}

// The edge mask's measure (kSoftEdgeShare) over one part of the pixel's list: the sum of share_j * (1 - D'_j)
// over the fragments whose nearest outline edge is a silhouette edge; share_j = w_j / `total` (every weight of
// the blend, the background's included).
Float soft_edge_share(const VertexInputs<BufferFloat3>& in, const BufferVar<uint3>& opposite, const DslCamera& cam,
                      const SoftSettings& st, const SoftTile& tile, const UInt2& pix, const Float& max_log_weight,
                      const Float& total) {
    Float s = 0.0f;
    $for (i, 0u, tile.count) {
        UInt tri = tile.list.read(tile.entry(i));
        SoftFragment f = soft_fragment(in, cam, st, tri, pix);
        $if (f.counts) {
            Float lw = soft_log_weight(f, st) - max_log_weight;
            $if (lw > kSoftNegligible) {
                $if (nearest_edge_is_silhouette(f, tri, in.positions, opposite, cam, pix)) {
                    // 1 - D' = (1 - D) / (1 - eps), and 1 - D = sigmoid(-logit).
                    Float open = sigmoid(-f.logit) * (1.0f / (1.0f - kSoftCutoff));
                    s = s + exp(min(lw, kSoftLargest)) / total * open;
                };
            };
        };
    };
    return s;
}

// d (pixel . g) / d the blend's sums, at the sums the forward pass stored (as SoftStage's backward seeds a part).
SoftSums soft_seed(const SoftSums& stored, const Float& max_log_weight, const Float3& bg, const SoftSettings& st,
                   const Float4& g) {
    SoftSums total = stored, seed;
    $autodiff {
        requires_grad(total.weights, total.colors, total.uncovered);
        adjoint::backward(dot(soft_finish(total, max_log_weight, bg, st), g));
        seed.weights = grad(total.weights);
        seed.colors = grad(total.colors);
        seed.uncovered = grad(total.uncovered);
    };
    return seed;
}

// The buffers the traced pass reads, as the kernel's arguments name them.
struct TracedSources {
    const BufferFloat3 &positions, &normals, &colors;
    const BufferFloat2& uvs;
    const BufferVar<uint3>& triangles;
    const BufferUInt& triangle_material;
    const BufferFloat& params;
    const BufferUInt &param_slot, &texture_slot;
    const BufferFloat& directions;
    const TextureSetFloat3& textures;
    const BufferVar<gpu::Material>& materials;
    const BufferVar<LightSlots>& lights;
    const ShadowGridRef& grid;
};

// One part of the pixel's list inside $autodiff with every free value traced (SoftStage's backward, seeded with
// `seed`): the pixel's contributions added to `out`.
void traced_part(const TracedSources& x, const ShadingPlan& plan, bool geometry, const Expr<gpu::ViewRec>& vr,
                 const SoftSettings& st, const SoftTile& part, const UInt2& pix, const Float& max_log_weight,
                 const SoftSums& seed, const BufferFloat& out, const UInt& at, const UInt& pixels) {
    $autodiff {
        DiagnoseDeltas d;
        mark_deltas(d);
        TracedParams tp{x.params, x.param_slot, d};
        TracedVertices pos{x.positions, x.directions, 0u, d, geometry}, nrm{x.normals, x.directions, 1u, d, geometry},
            col{x.colors, x.directions, 2u, d, geometry};
        DslCamera cam = camera_of(tp, vr);
        auto vin = vertex_inputs(plan, pos, nrm, col, x.uvs, x.triangles, x.triangle_material);
        ShadeInputs<TracedParams> in{tp, x.textures, x.materials, x.lights,
                                     shadow_hook(plan, pos, x.positions, x.triangles, x.grid, cam),
                                     [&](const UInt& t, const Float3& c) -> Float3 {
                                         return traced_sample(x.texture_slot, d, t, c);
                                     }};
        SoftSums s;
        soft_accumulate(vin, in, plan, cam, st, part, pix, max_log_weight, s);
        adjoint::backward(s.weights * seed.weights + dot(s.colors, seed.colors) + s.uncovered * seed.uncovered);
        add_slots(out, d, at, pixels);
    };
}

// One part of the pixel's list, [first, first + count): its edge share added to the mask's slot (thresholded
// by the `last` part), its traced contributions added to the slots. Textures detached, their samples traced.
auto diagnose_kernel(const ShadingPlan& groups, bool geometry) {
    ShadingPlan plan = groups;
    plan.material_texture_gradients = plan.light_texture_gradients = false;
    return Kernel2D([plan, geometry](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list, UInt tiles_x,
                                     BufferUInt pixel_count, UInt own_base, UInt capacity, UInt own_stride,
                                     BufferVar<gpu::ViewRec> views, UInt view, BufferFloat3 positions,
                                     BufferFloat3 normals, BufferFloat3 colors, BufferFloat2 uvs,
                                     BufferVar<uint3> triangles, BufferUInt triangle_material,
                                     BufferVar<uint3> opposite, BufferFloat params, BufferUInt param_slot,
                                     BufferUInt texture_slot, BufferFloat directions,
                                     TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                     BufferVar<LightSlots> lights, BufferFloat dfinal, BufferFloat out,
                                     Float3 background, Float sigma, Float gamma, Float reach2, BufferFloat grid_head,
                                     BufferUInt grid_slot, BufferUInt grid_cells, BufferUInt grid_list,
                                     BufferFloat4 sums, BufferFloat2 state, UInt first, UInt count,
                                     UInt last) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x, pixels = dispatch_size().x * dispatch_size().y;
        SoftTile part = soft_part(
            soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count,
                           soft_own(own_base, capacity, own_stride, tiles_x, pix), capacity, own_stride, pix),
            first, count);
        auto vr = views.read(view);
        // Clipping whether or not the forward pass did (SoftStage compiles that per view): where no triangle
        // reaches nearer than the near plane, the two are the same blend.
        SoftSettings st{sigma, gamma, reach2, vr.near, vr.far, true};
        DslCamera plain_cam = camera_of(params, vr);
        ShadowGridRef grid = shadow_grid_ref(plan, grid_head, grid_slot, grid_cells, grid_list);
        auto plain_vin = vertex_inputs(plan, positions, normals, colors, uvs, triangles, triangle_material);
        ShadeInputs<BufferFloat> plain_in{params, textures, materials, lights};   // the background's
        Float3 bg = background_at(plain_in, plan, background, [&] { return plain_cam.ray(pixel_centre(pix)); });
        Float2 ms = state.read(at);
        Float4 a = sums.read(at);
        SoftSums stored;
        stored.weights = a.x;
        stored.colors = a.yzw();
        stored.uncovered = ms.y;
        Float total = a.x + exp(kSoftBackground / gamma - ms.x);
        UInt edge = kDiagnoseSlots * pixels + at;
        Float share = out.read(edge) + soft_edge_share(plain_vin, opposite, plain_cam, st, part, pix, ms.x, total);
        out.write(edge, ite(last != 0u, ite(share > kSoftEdgeShare, 1.0f, 0.0f), share));
        Float4 g = read4(dfinal, 4u * at);
        $if ((part.count > 0u) & (dot(abs(g), make_float4(1.0f)) > 0.0f)) {
            SoftSums seed = soft_seed(stored, ms.x, bg, st, g);
            TracedSources x{positions, normals, colors, uvs, triangles, triangle_material, params, param_slot,
                            texture_slot, directions, textures, materials, lights, grid};
            traced_part(x, plan, geometry, vr, st, part, pix, ms.x, seed, out, at, pixels);
        };
    });
}

} // namespace

SoftDiagnoseStage::SoftDiagnoseStage(Device& device, const ShadingPlan& groups, bool geometry)
    : shader_(device.compile(diagnose_kernel(groups, geometry), {.name = "diagnose_soft"})), geometry(geometry) {}

void SoftDiagnoseStage::run(Stream& stream, const StageBuffers& b, uint32_t view, const SoftStage& soft,
                            const Buffer<float>& params, const Buffer<float>& dfinal, const DiagnoseBuffers& d) const {
    const SoftStage::Blend s = soft.blend();
    const auto& g = b.data.geometry;
    const auto& w = b.world;
    const auto& t = s.bins;
    stream << d.out.fill_zero();
    for (uint32_t p = 0; p < s.parts; ++p)
        stream << shader_(t.offset, t.count, t.list, t.tiles_x, s.pixel_count, t.reserved_at, s.capacity, s.own_stride,
                          b.views, view,
                          w.positions.value, w.normals.value, w.colors.value, g.uvs, g.triangles, g.triangle_material,
                          b.tables.opposite, params, d.param_slot, d.texture_slot, d.directions, b.data.textures,
                          b.data.materials, b.data.lights, dfinal, d.out, b.data.background, s.sigma, s.gamma, s.reach2,
                          b.shadow_grid.head, b.shadow_grid.slot, b.shadow_grid.cells, b.shadow_grid.list, s.sums,
                          s.state, p * s.part, s.part, uint32_t(p + 1 == s.parts))
                      .dispatch(t.width, t.height);
}

} // namespace adjoint::app
