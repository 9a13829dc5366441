// The differentiable vertex stage: world-space positions, normals and colours of every vertex computed
// from the parameter buffer (each mesh's translation, rotation, scale and OBJ positions and colours),
// normals recomputed from the positions where they move. Forward kernels write plain values; backward kernels rerun the same DSL code inside $autodiff, seeded with the adjoints that
// later stages scattered into the world-space buffers, and scatter into the parameter buffer's gradient.
#pragma once
#include "scene_data.h"

#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace adjoint::app {

struct GeometryTables {
    Buffer<gpu::VertexRec> vertices;   // per unified vertex
    Buffer<gpu::MeshRec> meshes;
    Buffer<float3> static_normals;     // object space, for vertices whose normal does not move
    Buffer<uint3> faces;               // per face around an OBJ position: its three positions' offsets
    // Silhouette edges: per triangle, for the edge opposite each of its vertices, the vertex opposite that
    // edge in the neighbouring triangle (gpu::kNone for a boundary or non-manifold edge).
    Buffer<uint3> opposite;
    Buffer<uint3> neighbor;            // the neighbouring triangle across the same edges, or gpu::kNone
};

GeometryTables build_geometry_tables(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout);

// Whether the optimization frees mesh `mesh`'s OBJ positions (its normals are then recomputed).
bool vertices_free(const Scene& scene, size_t mesh);

// A mesh's edges keyed by their two points (lower id first) -> the (triangle, corner opposite) pairs using
// them. Vertices split at normal or texture seams are one OBJ position, and OBJ positions repeated at the
// same place (a UV sphere's seam) are one point too (the first such position's id), so that a seam is not
// taken for a silhouette. Public because optim/regularizers.cpp walks the same edges.
using EdgeUsers = std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint32_t, uint32_t>>>;
EdgeUsers edges_by_position(const Mesh& mesh);

// World-space vertex buffers with their gradients (3 floats per vertex).
struct WorldVertices {
    DiffBuffer<float3> positions, normals, colors;
};

class GeometryStage {
public:
    GeometryStage(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout);
    ~GeometryStage();
    // params -> world positions, normals, colours (values).
    void forward(Stream& stream, const Buffer<float>& params, WorldVertices& out) const;
    // The world buffers' gradients -> params.grad (accumulates).
    void backward(Stream& stream, const DiffBuffer<float>& params, const WorldVertices& world) const;
    // --diagnose (render/diagnose_dsl.h): per vertex d (world position, normal, colour) / d each slot's
    // parameter, its components summed, from $autodiff of the forward code (9 reverse passes, one per output
    // float); slot: per float of params its slot. Into `out`, kVertexDirections * kDiagnoseSlots floats a vertex.
    void directions(Device& device, Stream& stream, const Buffer<float>& params, const Buffer<uint32_t>& slot,
                    const Buffer<float>& out) const;
    uint32_t vertex_count() const { return vertex_count_; }
    const GeometryTables& tables() const { return t_; }

private:
    struct Kernels;
    GeometryTables t_;
    uint32_t vertex_count_ = 0;
    std::unique_ptr<Kernels> k_;
};

} // namespace adjoint::app
