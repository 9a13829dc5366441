// The l2 loss: squared difference over linear RGB.
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

const LossModel loss_l2{"l2", "squared difference of linear RGB", [](const Float4& c, const Float4& t) -> Float {
                            Float3 d = c.xyz() - t.xyz();
                            return dot(d, d);
                        }};

} // namespace adjoint::app::plugins
