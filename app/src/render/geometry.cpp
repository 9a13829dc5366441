// The vertex stage: host tables (vertex records, faces around each OBJ position, silhouette-edge
// neighbours) and its DSL kernels.
#include "geometry.h"

#include "diagnose_dsl.h"
#include "geometry_dsl.h"
#include "scene/loading.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

namespace adjoint::app {

using gpu::kNone;

bool vertices_free(const Scene& scene, size_t mesh) {
    if (!scene.optimize) return false;
    for (const auto& p : scene.optimize->parameters)
        if (p.kind == ParameterKind::mesh_vertices && p.target == mesh) return true;
    return false;
}

EdgeUsers edges_by_position(const Mesh& mesh) {
    const size_t positions = mesh.obj_positions.size();
    std::map<std::array<float, 3>, uint32_t> at_point;
    std::vector<uint32_t> point(positions);
    for (size_t p = 0; p < positions; ++p) {
        const float3& v = mesh.obj_positions[p];
        point[p] = at_point.emplace(std::array<float, 3>{v.x, v.y, v.z}, uint32_t(p)).first->second;
    }
    EdgeUsers edges;
    for (size_t t = 0; t < mesh.triangles.size(); ++t) {
        const uint3& tr = mesh.triangles[t];
        const uint32_t c[3] = {tr.x, tr.y, tr.z};
        for (uint32_t k = 0; k < 3; ++k) {
            uint32_t a = point[mesh.position_ids[c[(k + 1) % 3]]], b = point[mesh.position_ids[c[(k + 2) % 3]]];
            if (a != b) edges[{std::min(a, b), std::max(a, b)}].push_back({uint32_t(t), k});
        }
    }
    return edges;
}

namespace {

struct VertexValues {
    Float3 position, normal, color;
};

// Which of the vertex stage's parameters its backward differentiates: those of a kind some mesh frees. The others'
// reads are detached, which spares every vertex its atomic adds into gradients nobody reads: a pose run's vertex
// stage added 3 per vertex into its positions' slots and 9 per face around it (the normal's sum), all unread.
struct VertexPlan {
    bool pose = true;        // translation, rotation, scale
    bool positions = true;   // the OBJ positions (vertices)
    bool colors = true;      // vertex colours
};

VertexPlan vertex_plan(const Scene& scene) {
    return {any_free(scene, {ParameterKind::mesh_translation, ParameterKind::mesh_rotation, ParameterKind::mesh_scale}),
            any_free(scene, {ParameterKind::mesh_vertices}), any_free(scene, {ParameterKind::mesh_vertex_colors})};
}

// A mesh's placement: its raw rotation quaternion, scale and translation.
struct Placement {
    Float4 rotation;
    Float3 scale, translation;
};

// World-space values of vertex v. The normal is the OBJ's own or the sum of the area-weighted normals of
// the faces around the vertex's OBJ position (a sum loop: no tape), carried to world space by R S^-1.
// `plan`: inside $autodiff, the reads it leaves out are detached (outside, the default reads all plainly).
// `placement`: the mesh's placement as the caller holds it (else read from `params`).
template <typename P>
VertexValues vertex_values(const P& params, const BufferVar<gpu::VertexRec>& verts,
                           const BufferVar<gpu::MeshRec>& meshes, const BufferFloat3& static_normals,
                           const BufferVar<uint3>& faces, const UInt& v, const VertexPlan& plan = {},
                           const Placement* placement = nullptr) {
    auto r = verts.read(v);
    auto m = meshes.read(r.mesh);
    Float4 q = placement ? placement->rotation : detached_unless(plan.pose, read4(params, m.rotation));
    Float3 scale = placement ? placement->scale : detached_unless(plan.pose, read3(params, m.scale));
    Float3 translation =
        placement ? placement->translation : detached_unless(plan.pose, read3(params, m.translation));
    VertexValues out;
    out.position = translation + rotate(q, detached_unless(plan.positions, read3(params, r.position)) * scale);
    Float3 n = make_float3(0.0f);
    $if (r.faces_begin != r.faces_end) {
        Float3 acc = make_float3(0.0f);
        $for (k, r.faces_begin, r.faces_end) {
            UInt3 f = faces.read(k);
            Float3 a = detached_unless(plan.positions, read3(params, f.x));
            Float3 b = detached_unless(plan.positions, read3(params, f.y));
            Float3 c = detached_unless(plan.positions, read3(params, f.z));
            acc += cross(b - a, c - a);
        };
        n = acc;
    }
    $else { n = static_normals.read(v); };
    out.normal = normalize(rotate(q, n / scale));
    Float3 c = make_float3(1.0f);
    $if (r.color != kNone) { c = detached_unless(plan.colors, read3(params, r.color)); };
    out.color = c;
    return out;
}

} // namespace

namespace {

// The tables on the host, filled mesh by mesh.
struct HostTables {
    std::vector<gpu::VertexRec> verts;
    std::vector<gpu::MeshRec> meshes;
    std::vector<float3> static_normals;
    std::vector<uint3> faces, opposite, neighbor;
    uint32_t vertex_base = 0, triangle_base = 0;
};

// Per vertex its record, and the faces around each OBJ position (CSR) when its normal is recomputed, in the
// OBJ's winding so the summed normal points outwards.
void add_vertices(const Mesh& mesh, uint32_t m, const ParamLayout& layout, bool recompute, HostTables& h) {
    // Vertex colours have a slot only where the mesh sets "vertex_colors" (the only meshes that read it).
    const uint32_t pos_base = layout.at(ParameterKind::mesh_vertices, m);
    const uint32_t col_base = layout.find(ParameterKind::mesh_vertex_colors, m);
    const size_t positions = mesh.obj_positions.size();
    auto offset = [&](uint32_t vertex) { return pos_base + 3 * mesh.position_ids[vertex]; };
    std::vector<std::vector<uint32_t>> around(positions);
    for (size_t t = 0; t < mesh.triangles.size(); ++t) {
        const uint3& tr = mesh.triangles[t];
        for (uint32_t corner : {tr.x, tr.y, tr.z}) around[mesh.position_ids[corner]].push_back(uint32_t(t));
    }
    std::vector<uint2> face_range(positions);
    for (size_t p = 0; p < positions; ++p) {
        face_range[p] = uint2(uint32_t(h.faces.size()), uint32_t(h.faces.size()));
        if (!recompute) continue;
        for (uint32_t t : around[p]) {
            const uint3& tr = mesh.triangles[t];
            h.faces.push_back(uint3(offset(tr.x), offset(tr.y), offset(tr.z)));
        }
        face_range[p].y = uint32_t(h.faces.size());
    }
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
        const uint32_t pid = mesh.position_ids[v];
        h.verts.push_back({m, pos_base + 3 * pid, mesh.vertex_colors ? col_base + 3 * pid : kNone,
                           face_range[pid].x, face_range[pid].y});
        h.static_normals.push_back(mesh.normals[v]);
    }
}

// Silhouette tables: per triangle and edge, the vertex opposite it in the neighbouring triangle and that
// triangle (kNone for a boundary or non-manifold edge).
void add_neighbours(const Mesh& mesh, const EdgeUsers& edges, HostTables& h) {
    std::vector<uint3> opp(mesh.triangles.size(), uint3(kNone, kNone, kNone)), nbr = opp;
    for (const auto& [key, users] : edges) {
        if (users.size() != 2) continue;
        for (int s = 0; s < 2; ++s) {
            auto [t, k] = users[s];
            auto [u, j] = users[1 - s];
            const uint3& other = mesh.triangles[u];
            const uint32_t oc[3] = {other.x, other.y, other.z};
            opp[t][k] = h.vertex_base + oc[j];
            nbr[t][k] = h.triangle_base + u;
        }
    }
    h.opposite.insert(h.opposite.end(), opp.begin(), opp.end());
    h.neighbor.insert(h.neighbor.end(), nbr.begin(), nbr.end());
}

} // namespace

GeometryTables build_geometry_tables(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout) {
    HostTables h;
    for (size_t mi = 0; mi < scene.meshes.size(); ++mi) {
        const Mesh& mesh = scene.meshes[mi];
        const uint32_t m = uint32_t(mi);
        h.meshes.push_back({layout.at(ParameterKind::mesh_translation, m), layout.at(ParameterKind::mesh_rotation, m),
                            layout.at(ParameterKind::mesh_scale, m)});
        const bool free_vertices = vertices_free(scene, mi);
        if (mesh.normals_computed && !free_vertices) {
            // Normals the loader computed from the faces, on vertices that do not move: computed again here from
            // the positions as they are now (params.json may have set them) and read as a file's own, so that the
            // vertex stage loops over no faces (the loop, nine reads a face, took about a quarter of vertex_forward's
            // and vertex_backward's time in a pose optimization).
            Mesh fixed = mesh;
            detail::compute_normals(fixed);
            add_vertices(fixed, m, layout, false, h);
        } else {
            add_vertices(mesh, m, layout, free_vertices, h);
        }
        add_neighbours(mesh, edges_by_position(mesh), h);
        h.vertex_base += uint32_t(mesh.positions.size());
        h.triangle_base += uint32_t(mesh.triangles.size());
    }
    GeometryTables t;
    t.vertices = upload(device, stream, h.verts);
    t.meshes = upload(device, stream, h.meshes);
    t.static_normals = upload(device, stream, h.static_normals);
    t.faces = upload(device, stream, h.faces);
    t.opposite = upload(device, stream, h.opposite);
    t.neighbor = upload(device, stream, h.neighbor);
    stream << synchronize();   // the host vectors go out of scope
    return t;
}

struct GeometryStage::Kernels {
    Shader<1> forward, backward;
    std::optional<Shader<1>> directions;   // compiled on the first directions()
};

GeometryStage::GeometryStage(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout)
    : t_(build_geometry_tables(device, stream, scene, layout)) {
    for (const auto& m : scene.meshes) vertex_count_ += uint32_t(m.positions.size());
    Kernel1D fwd = [](BufferVar<gpu::VertexRec> verts, BufferVar<gpu::MeshRec> meshes, BufferFloat3 static_normals,
                      BufferVar<uint3> faces, BufferFloat params, BufferFloat3 positions, BufferFloat3 normals,
                      BufferFloat3 colors) noexcept {
        UInt v = dispatch_id().x;
        VertexValues w = vertex_values(params, verts, meshes, static_normals, faces, v);
        positions.write(v, w.position);
        normals.write(v, w.normal);
        colors.write(v, w.color);
    };
    const VertexPlan plan = vertex_plan(scene);
    // A mesh's placement is the same for all its vertices, and a subgroup's vertices are mostly one mesh's: its
    // gradient is taken on values held in registers (requires_grad), summed over the subgroup and added by one
    // lane (params_grad is params' gradient buffer), instead of every vertex's atomic adds into the same ten
    // floats (compare-and-swap loops on lavapipe, every one contended).
    Kernel1D bwd = [plan](BufferVar<gpu::VertexRec> verts, BufferVar<gpu::MeshRec> meshes, BufferFloat3 static_normals,
                          BufferVar<uint3> faces, DiffBufferFloat params, BufferFloat g_positions,
                          BufferFloat g_normals, BufferFloat g_colors, BufferFloat params_grad) noexcept {
        UInt v = dispatch_id().x;
        // A DiffBuffer<float3>'s gradient holds 3 floats per element.
        Float3 gp = read3(g_positions, 3u * v), gn = read3(g_normals, 3u * v), gc = read3(g_colors, 3u * v);
        UInt mesh = verts.read(v).mesh;
        auto m = meshes.read(mesh);
        Float4 g_rotation = make_float4(0.0f);
        Float3 g_scale = make_float3(0.0f), g_translation = make_float3(0.0f);
        $autodiff {
            Placement placement{detach(read4(params, m.rotation)), detach(read3(params, m.scale)),
                                detach(read3(params, m.translation))};
            if (plan.pose) requires_grad(placement.rotation, placement.scale, placement.translation);
            VertexValues w = vertex_values(params, verts, meshes, static_normals, faces, v, plan, &placement);
            adjoint::backward(dot(w.position, gp) + dot(w.normal, gn) + dot(w.color, gc));
            if (plan.pose) {
                g_rotation = grad(placement.rotation);
                g_scale = grad(placement.scale);
                g_translation = grad(placement.translation);
            }
        };
        if (plan.pose) {
            auto add = [&](const Float4& r, const Float3& s, const Float3& t) {
                for (uint32_t k = 0; k < 4; ++k) params_grad.atomic(m.rotation + k).fetch_add(r[k]);
                for (uint32_t k = 0; k < 3; ++k) params_grad.atomic(m.scale + k).fetch_add(s[k]);
                for (uint32_t k = 0; k < 3; ++k) params_grad.atomic(m.translation + k).fetch_add(t[k]);
            };
            $if (subgroup_all_equal(mesh)) {
                Float4 r = subgroup_add(g_rotation);
                Float3 s = subgroup_add(g_scale), t = subgroup_add(g_translation);
                $if (subgroup_elect()) { add(r, s, t); };
            }
            $else { add(g_rotation, g_scale, g_translation); };
        }
    };
    k_ = std::make_unique<Kernels>(Kernels{device.compile(fwd, {.name = "vertex_forward"}),
                                           device.compile(bwd, {.name = "vertex_backward"}), std::nullopt});
}

GeometryStage::~GeometryStage() = default;

void GeometryStage::forward(Stream& stream, const Buffer<float>& params, WorldVertices& out) const {
    if (vertex_count_ == 0) return;
    stream << k_->forward(t_.vertices, t_.meshes, t_.static_normals, t_.faces, params, out.positions.value,
                          out.normals.value, out.colors.value)
                  .dispatch(vertex_count_);
}

void GeometryStage::backward(Stream& stream, const DiffBuffer<float>& params, const WorldVertices& world) const {
    if (vertex_count_ == 0) return;
    stream << k_->backward(t_.vertices, t_.meshes, t_.static_normals, t_.faces, params, world.positions.grad,
                           world.normals.grad, world.colors.grad, params.grad)
                  .dispatch(vertex_count_);
}

} // namespace adjoint::app

namespace adjoint::app {

void GeometryStage::directions(Device& device, Stream& stream, const Buffer<float>& params,
                               const Buffer<uint32_t>& slot, const Buffer<float>& out) const {
    if (vertex_count_ == 0) return;
    if (!k_->directions) {
        Kernel1D k = [](BufferVar<gpu::VertexRec> verts, BufferVar<gpu::MeshRec> meshes, BufferFloat3 static_normals,
                        BufferVar<uint3> faces, BufferFloat params, BufferUInt slot, UInt output, Float3 e_position,
                        Float3 e_normal, Float3 e_color, BufferFloat out) noexcept {
            UInt v = dispatch_id().x;
            $autodiff {
                DiagnoseDeltas d;
                mark_deltas(d);
                VertexValues w = vertex_values(TracedParams{params, slot, d}, verts, meshes, static_normals, faces, v);
                adjoint::backward(dot(w.position, e_position) + dot(w.normal, e_normal) + dot(w.color, e_color));
                auto g = grad(d);
                for (uint32_t s = 0; s < kDiagnoseSlots; ++s)
                    out.write((v * kVertexDirections + output) * kDiagnoseSlots + s, g[s]);
            };
        };
        k_->directions.emplace(device.compile(k, {.name = "vertex_directions"}));
    }
    for (uint32_t c = 0; c < kVertexDirections; ++c) {
        float3 e[3]{};
        e[c / 3][c % 3] = 1.0f;
        stream << (*k_->directions)(t_.vertices, t_.meshes, t_.static_normals, t_.faces, params, slot, c, e[0], e[1],
                                    e[2], out)
                      .dispatch(vertex_count_);
    }
}

} // namespace adjoint::app
