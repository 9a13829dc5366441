// The views' records for the dynamic stages.
#include "render/stage_buffers.h"

namespace adjoint::app {

std::vector<gpu::ViewRec> view_records(const Scene& scene, const ParamLayout& layout) {
    std::vector<gpu::ViewRec> recs;
    for (size_t v = 0; v < scene.views.size(); ++v) {
        const Camera& c = scene.views[v];
        const uint32_t view = uint32_t(v);
        const float w = float(c.width), h = float(c.height);
        // projection_matrix's terms relative to sy (fy's, through fov_y, which the loader keeps equal to it).
        float x_scale = h / w, offset_x = 0, offset_y = 0;
        if (const auto& k = c.intrinsics) {
            x_scale = (k->fx / w) / (k->fy / h);
            offset_x = 2 * k->cx / w - 1;
            offset_y = 1 - 2 * k->cy / h;
        }
        recs.push_back({c.up, layout.at(ParameterKind::camera_eye, view), layout.at(ParameterKind::camera_target, view),
                        layout.at(ParameterKind::camera_fov_y, view), c.near, c.far, w, h, x_scale, offset_x,
                        offset_y});
    }
    return recs;
}

} // namespace adjoint::app
