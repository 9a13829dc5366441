// The device buffers every stage of the dynamic renderer reads: the scene's topology and shading resources,
// the world-space vertices with their gradients (the vertex stage's output), the views' cameras (values in
// the parameter buffer) and the silhouette tables.
#pragma once
#include "render/geometry.h"

namespace adjoint::app {

struct StageBuffers {
    const SceneData& data;
    const WorldVertices& world;
    const Buffer<gpu::ViewRec>& views;
    const GeometryTables& tables;
};

// The views' cameras as the stages read them: fixed values, and where eye, target and fov_y live in the
// parameter buffer.
std::vector<gpu::ViewRec> view_records(const Scene& scene, const ParamLayout& layout);

} // namespace adjoint::app
