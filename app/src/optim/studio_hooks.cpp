// The Optimizer's hooks for adjoint-studio: a render of the current values into a device buffer (the panels
// never read images back), learning rates changed during a run, and one parameter's value and gradient.
#include "free_parameters.h"

#include <algorithm>
#include <cmath>

namespace adjoint::app {

void Optimizer::render_current(uint32_t view, const Buffer<float4>& out) {
    auto& s = *s_;
    if (view >= s.data.views.size())
        fail("render_current: view ", view, " does not exist (the scene has ", s.data.views.size(), ")");
    if (out.size() != s.objective->pixels())
        fail("render_current: the buffer holds ", out.size(), " texels, the view has ", s.objective->pixels());
    s.objective->render(s.params.value, view, out);
    s.stream << synchronize();
}

void Optimizer::set_learning_rate(size_t parameter, float lr) {
    auto& s = *s_;
    if (parameter >= s.free.size())
        fail("set_learning_rate: parameter ", parameter, " does not exist (the scene has ", s.free.size(),
             " free parameters)");
    if (!(lr > 0.0f) || !std::isfinite(lr))
        fail("set_learning_rate: ", s.free[parameter].p.path, ": the learning rate must be a number > 0, got ", lr);
    s.free[parameter].p.lr = lr;
    const std::vector<float4> rates = parameter_rates(s.free);
    s.stream << s.rates.copy_from(rates.data()) << synchronize();
}

void Optimizer::parameter_now(size_t parameter, std::vector<float>& value, std::vector<float>& gradient) {
    auto& s = *s_;
    if (parameter >= s.free.size())
        fail("parameter_now: parameter ", parameter, " does not exist (the scene has ", s.free.size(),
             " free parameters)");
    const FreeParam& f = s.free[parameter];
    value.resize(f.p.size);
    gradient.assign(f.p.size, 0.0f);
    s.stream << s.params.value.copy_to(value.data(), f.offset, f.p.size);
    // step() leaves the gradient in params.grad (the update reads it, the next record zeroes it); before the
    // first step the buffer holds nothing of a step.
    if (s.iteration > 0) s.stream << s.params.grad.copy_to(gradient.data(), f.offset, f.p.size);
    s.stream << synchronize();
}

} // namespace adjoint::app
