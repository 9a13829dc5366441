// The device buffers every stage of the dynamic renderer reads: the scene's topology and shading resources,
// the world-space vertices with their gradients (the vertex stage's output), the views' cameras (values in
// the parameter buffer), the silhouette tables and the shadow grids.
#pragma once
#include "render/geometry.h"

namespace adjoint::app {

// What the shading kernels read (ShadowGridRef in shadow_dsl.h); small and unread where no grid is built.
struct ShadowGridBuffers {
    Buffer<float> head;       // 16 floats (kShadowHead) per light of the light buffer
    Buffer<uint32_t> slot;    // per light of the light buffer: its grid among the shadowing lights
    Buffer<uint32_t> cells;   // per cell of every grid: its list's offset and length
    Buffer<uint32_t> list;    // the cells' triangle indices
};

struct StageBuffers {
    const SceneData& data;
    const WorldVertices& world;
    const Buffer<gpu::ViewRec>& views;
    const GeometryTables& tables;
    const ShadowGridBuffers& shadow_grid;   // of the view last rendered (render/shadow_grid.h)
};

// The views' cameras as the stages read them: fixed values, and where eye, target and fov_y live in the
// parameter buffer.
std::vector<gpu::ViewRec> view_records(const Scene& scene, const ParamLayout& layout);

} // namespace adjoint::app
