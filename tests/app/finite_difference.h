// Central differences of an optimizer's loss along one free float: the reference the gradient tests
// compare $autodiff's gradients with.
#pragma once
#include <adjoint/app/optimization.h>

#include <vector>

namespace adjoint::test {

// (loss(x0 + h e_i) - loss(x0 - h e_i)) / (the step actually taken in float); leaves the values at x0.
inline double central_difference(app::Optimizer& opt, const std::vector<float>& x0, size_t i, double h) {
    auto x = x0;
    x[i] = float(x0[i] + h);
    opt.set_free_values(x);
    const double lp = opt.evaluate();
    x[i] = float(x0[i] - h);
    opt.set_free_values(x);
    const double lm = opt.evaluate();
    opt.set_free_values(x0);
    return (lp - lm) / (double(float(x0[i] + h)) - double(float(x0[i] - h)));
}

} // namespace adjoint::test
