// The loss window's curves, drawn with ImGui's draw list: axes, ticks and labels, raw values and their average.
#include "curves.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace adjoint::studio {

namespace {

std::string tick_label(double v, bool log_axis) {
    char buf[32];
    if (log_axis) std::snprintf(buf, sizeof buf, "1e%.0f", std::round(v) + 0.0);   // + 0.0: never "1e-0"
    else std::snprintf(buf, sizeof buf, "%.4g", std::abs(v) < 1e-12 ? 0.0 : v);
    return buf;
}

// The range the values span, padded so that a flat curve still has an axis.
std::pair<double, double> value_range(const std::vector<float>& v, bool log_axis) {
    auto [a, b] = std::minmax_element(v.begin(), v.end());
    double lo = *a, hi = *b;
    if (log_axis) return {std::floor(lo), std::max(std::ceil(hi), std::floor(lo) + 1.0)};
    if (hi - lo < 1e-9) lo -= 0.5, hi += 0.5;
    return {lo, hi};
}

} // namespace

std::vector<double> axis_ticks(double lo, double hi, bool log_axis, int most) {
    std::vector<double> ticks;
    if (!(hi > lo) || most < 1) return ticks;
    double step;
    if (log_axis) {
        step = std::max(1.0, std::ceil((hi - lo) / most));
    } else {
        const double raw = (hi - lo) / most, power = std::pow(10.0, std::floor(std::log10(raw)));
        const double f = raw / power;
        step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
    }
    for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + 1e-9 * step; t += step) ticks.push_back(t);
    return ticks;
}

std::vector<float> smoothed(const std::vector<float>& values, float smoothing) {
    std::vector<float> out(values.size());
    const float k = std::clamp(smoothing, 0.0f, 0.999f);
    for (size_t i = 0; i < values.size(); ++i) out[i] = i == 0 ? values[0] : k * out[i - 1] + (1.0f - k) * values[i];
    return out;
}

CurveFacts draw_curve(const Curve& curve, ImVec2 size, float smoothing) {
    CurveFacts facts{curve.title, {}, {}, {}};
    ImGui::TextUnformatted(curve.title.c_str());
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton(curve.id, {std::max(size.x, 60.0f), std::max(size.y, 40.0f)});
    if (curve.values.empty()) return facts;
    const float line = ImGui::GetTextLineHeight(), left = 52.0f;
    const ImVec2 a{p.x + left, p.y + line * 0.5f}, b{p.x + std::max(size.x, 60.0f) - 8.0f, p.y + std::max(size.y, 40.0f) - line - 2.0f};
    facts.plot = {a.x, a.y, b.x, b.y};
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 axis = ImGui::GetColorU32(ImGuiCol_TextDisabled), grid = ImGui::GetColorU32(ImGuiCol_Separator, 0.5f);
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    draw->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
    const auto [lo, hi] = value_range(curve.values, curve.log_axis);
    const size_t n = curve.values.size();
    const double x_lo = curve.first_iteration, x_hi = double(curve.first_iteration + std::max<size_t>(n, 2) - 1);
    const auto x_at = [&](double it) { return a.x + float((it - x_lo) / (x_hi - x_lo)) * (b.x - a.x); };
    const auto y_at = [&](double v) { return b.y - float((std::clamp(v, lo, hi) - lo) / (hi - lo)) * (b.y - a.y); };
    for (double t : axis_ticks(lo, hi, curve.log_axis, std::max(1, int((b.y - a.y) / (2.0f * line))))) {
        const float y = y_at(t);
        draw->AddLine({a.x, y}, {b.x, y}, grid);
        facts.y_ticks.push_back(tick_label(t, curve.log_axis));
        const ImVec2 size_of = ImGui::CalcTextSize(facts.y_ticks.back().c_str());
        draw->AddText({a.x - 4.0f - size_of.x, y - line * 0.5f}, text, facts.y_ticks.back().c_str());
    }
    for (double t : axis_ticks(x_lo, x_hi, false, std::max(1, int((b.x - a.x) / 70.0f)))) {
        if (t != std::floor(t)) continue;   // iterations are whole
        const float x = x_at(t);
        draw->AddLine({x, b.y}, {x, b.y + 4.0f}, axis);
        facts.x_ticks.push_back(tick_label(t, false));
        const ImVec2 size_of = ImGui::CalcTextSize(facts.x_ticks.back().c_str());
        draw->AddText({x - size_of.x * 0.5f, b.y + 3.0f}, text, facts.x_ticks.back().c_str());
    }
    draw->AddLine(a, {a.x, b.y}, axis);
    draw->AddLine({a.x, b.y}, b, axis);
    // At most one point per pixel column: a long run is drawn at the plot's own resolution.
    const size_t stride = std::max<size_t>(1, size_t(float(n) / std::max(b.x - a.x, 1.0f)));
    const std::vector<float> mean = smoothed(curve.values, smoothing);
    for (const auto& [values, colour, thickness] :
         {std::tuple{&curve.values, ImGui::GetColorU32(ImGuiCol_PlotLines, 0.35f), 1.0f},
          std::tuple{&mean, ImGui::GetColorU32(ImGuiCol_PlotLinesHovered), 2.0f}}) {
        std::vector<ImVec2> points;
        for (size_t i = 0; i < n; i += stride) points.push_back({x_at(double(curve.first_iteration + i)), y_at((*values)[i])});
        if (points.size() == 1) points.push_back({b.x, points[0].y});
        draw->AddPolyline(points.data(), int(points.size()), colour, 0, thickness);
    }
    return facts;
}

} // namespace adjoint::studio
