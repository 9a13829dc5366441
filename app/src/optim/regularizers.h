// The objective's mesh regularizers (optimize.regularizers): the uniform Laplacian and the edge length over
// the meshes whose vertices are free, their adjacency tables and their $autodiff kernels.
#pragma once
#include "render/scene_data.h"

#include <optional>

namespace adjoint::app {

class Regularizers {
public:
    // The weights are the scene's optimize.regularizers; the tables cover the meshes whose OBJ positions are
    // free parameters, at their slots in `layout`.
    Regularizers(Device& device, Stream& stream, const Scene& scene, const ParamLayout& layout);

    // How many loss terms record() writes: one per regularized position when the Laplacian has a weight, then
    // one per unique edge when the edge length has.
    uint32_t terms() const;
    // The terms into reg_loss[0 .. terms()) and their gradients into params.grad (accumulates; weights
    // already applied, means over positions and edges, so the terms' sum is the regularizers' loss).
    void record(Stream& stream, const DiffBuffer<float>& params, const Buffer<float>& reg_loss) const;

private:
    float laplacian_ = 0, edge_length_ = 0;
    // Per regularized OBJ position its offset and its neighbours' (CSR); the unique edges as offset pairs.
    Buffer<uint32_t> position_;   // per position: its offset
    Buffer<uint2> range_;         // per position: [begin, end) in neighbors_
    Buffer<uint32_t> neighbors_;  // neighbour offsets
    Buffer<uint2> edges_;         // per unique edge
    uint32_t positions_ = 0, edge_count_ = 0;
    // Compiled only for a regularizer that contributes terms.
    std::optional<Shader<1>> laplacian_kernel_, edge_length_kernel_;
};

} // namespace adjoint::app
