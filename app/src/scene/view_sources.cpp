// The datasets `views` may name ({"nerf": ...}, {"colmap": ...}), one line each; a new one is one file here.
#include "scene/loading.h"

namespace adjoint::app::detail {

namespace {
const ViewSource* const sources[] = {&nerf_view_source, &colmap_view_source};
}

std::span<const ViewSource* const> view_sources() { return sources; }

} // namespace adjoint::app::detail
