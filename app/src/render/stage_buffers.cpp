// The views' records for the dynamic stages.
#include "render/stage_buffers.h"

namespace adjoint::app {

std::vector<gpu::ViewRec> view_records(const Scene& scene, const ParamLayout& layout) {
    std::vector<gpu::ViewRec> recs;
    for (size_t v = 0; v < scene.views.size(); ++v) {
        const Camera& c = scene.views[v];
        recs.push_back({c.up, layout.view_eye[v], layout.view_target[v], layout.view_fov[v], c.near, c.far,
                        float(c.width), float(c.height)});
    }
    return recs;
}

} // namespace adjoint::app
