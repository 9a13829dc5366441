// The silhouette loss: squared difference of alpha (coverage), a mask loss for geometry.
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

const LossModel loss_silhouette{"silhouette", "squared difference of coverage (alpha): a mask loss",
                                [](const Float4& c, const Float4& t) -> Float {
                                    Float d = c.w - t.w;
                                    return d * d;
                                }};

} // namespace adjoint::app::plugins
