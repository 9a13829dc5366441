// The plug-ins' definitions, declared for registry.cpp (each is defined in its own file of this folder).
#pragma once
#include <adjoint/app/plugins.h>
#include <adjoint/app/scene.h>

namespace adjoint::app::plugins {

extern const MaterialModel material_phong, material_pbr;
extern const LightModel light_point, light_directional, light_ambient, light_sh, light_environment;
extern const LossModel loss_l2, loss_l1, loss_silhouette;
extern const OptimizerModel optimizer_adam, optimizer_sgd;

} // namespace adjoint::app::plugins
