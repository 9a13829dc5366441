// The registries: one line per plug-in, in the order the scene format lists them (the first is the default).
#include "scene/plugins/registry.h"

#include <adjoint/core/error.h>

namespace adjoint::app {

namespace {

const MaterialModel* const materials[] = {&plugins::material_phong, &plugins::material_pbr};
const LightModel* const lights[] = {&plugins::light_point, &plugins::light_directional, &plugins::light_ambient,
                                     &plugins::light_sh, &plugins::light_environment};
const LossModel* const losses[] = {&plugins::loss_l2, &plugins::loss_l1, &plugins::loss_silhouette};
const OptimizerModel* const optimizers[] = {&plugins::optimizer_adam, &plugins::optimizer_sgd};

template <typename T>
const T* find(std::span<const T* const> all, std::string_view name) {
    for (const T* m : all)
        if (m->name == name) return m;
    return nullptr;
}

template <typename T>
const T& get(std::span<const T* const> all, std::string_view name, const char* what) {
    if (const T* m = find(all, name)) return *m;
    std::string known;
    for (const T* m : all) known += (known.empty() ? "" : ", ") + std::string(m->name);
    throw Error("no " + std::string(what) + " named \"" + std::string(name) + "\" (there are: " + known + ")");
}

} // namespace

std::span<const MaterialModel* const> material_models() { return materials; }
const MaterialModel* find_material_model(std::string_view name) { return find(material_models(), name); }
const MaterialModel& material_model(std::string_view name) { return get(material_models(), name, "material model"); }
uint32_t material_model_index(const MaterialModel& model) {
    for (uint32_t i = 0; i < std::size(materials); ++i)
        if (materials[i] == &model) return i;
    fail("material model ", model.name, " is not registered");
}
std::span<const LightModel* const> light_models() { return lights; }
std::span<const LossModel* const> loss_models() { return losses; }
std::span<const OptimizerModel* const> optimizer_models() { return optimizers; }
const LightModel* find_light_model(std::string_view name) { return find(light_models(), name); }
const LightModel& light_model(std::string_view name) { return get(light_models(), name, "light type"); }
const LossModel* find_loss(std::string_view name) { return find(loss_models(), name); }
const OptimizerModel* find_optimizer(std::string_view name) { return find(optimizer_models(), name); }
const LossModel& loss_model(std::string_view name) { return get(loss_models(), name, "loss"); }
const OptimizerModel& optimizer_model(std::string_view name) { return get(optimizer_models(), name, "optimizer"); }

} // namespace adjoint::app
