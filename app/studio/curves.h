// The loss window's curves: a plot with axes, tick labels (decades on a log axis, round numbers on a linear
// one, iterations along the bottom), the values faint and their exponential moving average drawn over them.
#pragma once
#include "textures.h"

#include <imgui.h>

#include <string>
#include <tuple>
#include <vector>

namespace adjoint::studio {

struct CurveFacts {
    std::string title;
    PanelRect plot;                          // the plotting area, inside the axes
    std::vector<std::string> y_ticks, x_ticks;
};

struct Curve {
    const char* id;
    std::string title;
    std::vector<float> values;   // log10 of the quantity on a log axis
    bool log_axis = false;
    uint32_t first_iteration = 1;   // the iteration of values[0]
};

// Ticks of an axis from lo to hi: whole decades on a log10 axis (values are exponents), else round steps of
// 1, 2 or 5 times a power of ten; at most about `most` of them.
std::vector<double> axis_ticks(double lo, double hi, bool log_axis, int most);
// The exponential moving average with weight `smoothing` in [0, 1) on the past (0: the values themselves).
std::vector<float> smoothed(const std::vector<float>& values, float smoothing);
// Draws the curve into the current window at the cursor, `size` with its labels.
CurveFacts draw_curve(const Curve& curve, ImVec2 size, float smoothing);

} // namespace adjoint::studio
