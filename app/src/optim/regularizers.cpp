// The mesh regularizers (regularizers.h): their adjacency tables from the meshes' edges and their kernels.
#include "optim/regularizers.h"

#include "render/geometry.h"
#include "render/shading.h"

namespace adjoint::app {

namespace {

struct HostTables {
    std::vector<uint32_t> position, neighbors;
    std::vector<uint2> range, edges;
};

// A mesh's rows: per OBJ position its neighbours across the edges (a position merged into another point has
// none: its term is 0), and the unique edges. Offsets are pos_base + 3 * position.
void add_mesh(const Mesh& mesh, uint32_t pos_base, HostTables& h) {
    const size_t positions = mesh.obj_positions.size();
    std::vector<std::vector<uint32_t>> nb(positions);
    for (const auto& [key, users] : edges_by_position(mesh)) {
        nb[key.first].push_back(key.second);
        nb[key.second].push_back(key.first);
        h.edges.push_back(uint2(pos_base + 3 * key.first, pos_base + 3 * key.second));
    }
    for (size_t p = 0; p < positions; ++p) {
        h.position.push_back(pos_base + 3 * uint32_t(p));
        uint32_t begin = uint32_t(h.neighbors.size());
        for (uint32_t q : nb[p]) h.neighbors.push_back(pos_base + 3 * q);
        h.range.push_back(uint2(begin, uint32_t(h.neighbors.size())));
    }
}

// Uniform Laplacian: |p - mean of its neighbours|^2 per position, times weight / positions.
Shader<1> compile_laplacian(Device& device) {
    Kernel1D lap = [](BufferUInt position, BufferVar<uint2> range, BufferUInt neighbors, DiffBufferFloat params,
                      BufferFloat loss, Float weight) noexcept {
        UInt i = dispatch_id().x;
        UInt2 r = range.read(i);
        Float value = 0.0f;
        $autodiff {
            Float3 sum = make_float3(0.0f);
            $for (k, r.x, r.y) { sum += read3(params, neighbors.read(k)); };
            Float3 d = read3(params, position.read(i)) - sum / cast<float>(max(r.y - r.x, 1u));
            Float l = ite(r.y > r.x, dot(d, d), 0.0f) * weight;
            adjoint::backward(l);
            value = l;
        };
        loss.write(i, value);
    };
    return device.compile(lap, {.name = "regularize_laplacian"});
}

// Edge length: |a - b|^2 per unique edge, times weight / edges.
Shader<1> compile_edge_length(Device& device) {
    Kernel1D edge = [](BufferVar<uint2> edges, DiffBufferFloat params, BufferFloat loss, UInt out_base,
                       Float weight) noexcept {
        UInt i = dispatch_id().x;
        UInt2 e = edges.read(i);
        Float value = 0.0f;
        $autodiff {
            Float3 d = read3(params, e.x) - read3(params, e.y);
            Float l = dot(d, d) * weight;
            adjoint::backward(l);
            value = l;
        };
        loss.write(out_base + i, value);
    };
    return device.compile(edge, {.name = "regularize_edge_length"});
}

} // namespace

Regularizers::Regularizers(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout) {
    if (scene.optimize) {
        laplacian_ = scene.optimize->laplacian;
        edge_length_ = scene.optimize->edge_length;
    }
    HostTables h;
    for (size_t m = 0; m < scene.meshes.size(); ++m)
        if (vertices_free(scene, m))
            add_mesh(scene.meshes[m], layout.at(ParameterKind::mesh_vertices, uint32_t(m)), h);
    position_ = upload(device, stream, h.position);
    range_ = upload(device, stream, h.range);
    neighbors_ = upload(device, stream, h.neighbors);
    edges_ = upload(device, stream, h.edges);
    positions_ = uint32_t(h.position.size());
    edge_count_ = uint32_t(h.edges.size());
    stream << synchronize();   // the host vectors go out of scope
    if (laplacian_ > 0 && positions_ > 0) laplacian_kernel_ = compile_laplacian(device);
    if (edge_length_ > 0 && edge_count_ > 0) edge_length_kernel_ = compile_edge_length(device);
}

uint32_t Regularizers::terms() const {
    return (laplacian_ > 0 ? positions_ : 0) + (edge_length_ > 0 ? edge_count_ : 0);
}

void Regularizers::record(Stream& stream, const DiffBuffer<float>& params, const Buffer<float>& reg_loss) const {
    uint32_t at = 0;
    if (laplacian_kernel_) {
        stream << (*laplacian_kernel_)(position_, range_, neighbors_, params, reg_loss,
                                       laplacian_ / float(positions_))
                      .dispatch(positions_);
        at = positions_;
    }
    if (edge_length_kernel_)
        stream << (*edge_length_kernel_)(edges_, params, reg_loss, at, edge_length_ / float(edge_count_))
                      .dispatch(edge_count_);
}

} // namespace adjoint::app
