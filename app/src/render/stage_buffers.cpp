// The views' records for the dynamic stages.
#include "render/stage_buffers.h"

namespace adjoint::app {

std::vector<gpu::ViewRec> view_records(const Scene& scene, const ParamLayout& layout) {
    std::vector<gpu::ViewRec> recs;
    for (size_t v = 0; v < scene.views.size(); ++v) {
        const Camera& c = scene.views[v];
        const uint32_t view = uint32_t(v);
        recs.push_back({c.up, layout.at(ParameterKind::camera_eye, view), layout.at(ParameterKind::camera_target, view),
                        layout.at(ParameterKind::camera_fov_y, view), layout.at(ParameterKind::camera_intrinsics, view),
                        c.intrinsics ? 1u : 0u, c.near, c.far, float(c.width), float(c.height)});
    }
    return recs;
}

} // namespace adjoint::app
