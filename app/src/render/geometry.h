// The differentiable vertex stage: world-space positions, normals and colours of every vertex computed
// from the parameter buffer (each mesh's translation, rotation, scale and OBJ positions and colours),
// normals recomputed from the positions where they move; and the mesh regularizers. Forward kernels write
// plain values; backward kernels rerun the same DSL code inside $autodiff, seeded with the adjoints that
// later stages scattered into the world-space buffers, and scatter into the parameter buffer's gradient.
#pragma once
#include "scene_data.h"

#include <memory>

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
    // Regularizers over the meshes whose vertices are free: per OBJ position its offset and its
    // neighbours' (CSR), and the unique edges as offset pairs.
    Buffer<uint32_t> reg_position;     // per regularized position: its offset
    Buffer<uint2> reg_range;           // per regularized position: [begin, end) in reg_neighbors
    Buffer<uint32_t> reg_neighbors;    // neighbour offsets
    Buffer<uint2> reg_edges;           // per unique edge
    uint32_t reg_positions = 0, reg_edge_count = 0;
};

GeometryTables build_geometry_tables(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout);

// World-space vertex buffers with their gradients (3 floats per vertex).
struct WorldVertices {
    DiffBuffer<float3> positions, normals, colors;
};

class GeometryStage {
public:
    GeometryStage(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout,
                  float laplacian, float edge_length);
    ~GeometryStage();
    // params -> world positions, normals, colours (values).
    void forward(Stream& stream, const Buffer<float>& params, WorldVertices& out) const;
    // The world buffers' gradients -> params.grad (accumulates).
    void backward(Stream& stream, const DiffBuffer<float>& params, const WorldVertices& world) const;
    // The regularizers' loss terms into reg_loss[0 .. regularizer_terms()) and their gradients into
    // params.grad (weights already applied, means over positions and edges).
    void regularize(Stream& stream, const DiffBuffer<float>& params, const Buffer<float>& reg_loss) const;
    uint32_t regularizer_terms() const;
    uint32_t vertex_count() const { return vertex_count_; }
    const GeometryTables& tables() const { return t_; }

private:
    struct Kernels;
    GeometryTables t_;
    uint32_t vertex_count_ = 0;
    float laplacian_ = 0, edge_length_ = 0;
    std::unique_ptr<Kernels> k_;
};

} // namespace adjoint::app
