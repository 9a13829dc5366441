// The l1 loss: absolute difference over linear RGB.
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

const LossModel loss_l1{"l1", "absolute difference of linear RGB", [](const Float4& c, const Float4& t) -> Float {
                            Float3 d = c.xyz() - t.xyz();
                            return abs(d.x) + abs(d.y) + abs(d.z);
                        }};

} // namespace adjoint::app::plugins
