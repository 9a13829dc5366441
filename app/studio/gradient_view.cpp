// The Gradient images tab: Optimizer::attribute_pixels for one parameter, the selected view's slice drawn on
// report.png's diverging map (full scale the 99th percentile), the edge pixels tinted green over it.
#include "gradient_view.h"

#include "clock.h"
#include "environment.h"
#include "panels.h"

#include <adjoint/app/report.h>

#include <algorithm>
#include <cmath>

namespace adjoint::studio {

GradientView::GradientView(Device& device, Textures& textures)
    : device_(device), textures_(textures), stream_(device.create_stream()) {}

void GradientView::open(Session& session) {
    facts_ = {};
    parameters_.clear();
    names_.clear();
    chosen_ = 0;
    dirty_ = true;
    drawn_ = false;
    zoom_ = {};
    computed_iteration_ = computed_view_ = UINT32_MAX;
    last_ms_ = -1e300;
    facts_.available = session.pixel_gradients_available();
    if (!facts_.available) return;
    const std::vector<app::ParameterState>& params = session.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
        parameters_.push_back(i);
        names_.push_back(params[i].path);
    }
    width_ = session.width();
    height_ = session.height();
    id_ = textures_.create(width_, height_);
    texels_ = device_.create_buffer<uint32_t>(size_t(width_) * height_);
}

void GradientView::catch_up(Session& session, bool running, bool quitting) {
    if (!facts_.available || parameters_.empty()) return;
    const bool shown = std::exchange(drawn_, false);
    const uint32_t view = session.selected_view;
    const bool moved = session.iteration() != computed_iteration_ || view != computed_view_;
    // At most a fifth of the time spent on it while running (it is a whole backward pass with traced reads).
    const double wait = std::max(500.0, 4.0 * cost_ms_);
    const bool due = dirty_ || (moved && (!running || quitting || now_ms() - last_ms_ > wait));
    if (!shown || !due) return;   // computed only for a tab that is seen
    const double start = now_ms();
    const app::PixelAttribution a = session.pixel_gradients(parameters_[size_t(chosen_)], view);
    const size_t pixels = size_t(width_) * height_;
    app::Image slice(int(width_), int(height_), 1);
    std::copy_n(a.images[0].begin() + ptrdiff_t(view * pixels), pixels, slice.pixels.begin());
    double sum = 0;
    for (float v : a.images[0]) sum += double(v);
    app::Image picture = app::gradient_picture(slice, &facts_.scale);
    uint32_t edges = 0;
    for (size_t i = 0; i < pixels; ++i)
        if (a.edges[view * pixels + i] > 0.0f) {
            ++edges;
            if (edges_) picture.pixels[3 * i + 1] = std::max(picture.pixels[3 * i + 1], 0.6f);   // green over it
        }
    stream_ << texels_.copy_from(tone_map(picture.pixels, 0.0f, ToneMap::clamp).data()) << synchronize();
    textures_.update(id_, texels_);
    facts_.parameter = names_[size_t(chosen_)];
    facts_.view = view;
    facts_.iteration = session.iteration();
    facts_.sum = sum;
    facts_.edge_pixels = edges;
    ++facts_.computed;
    computed_iteration_ = session.iteration();
    computed_view_ = view;
    last_ms_ = now_ms();
    cost_ms_ = last_ms_ - start;
    dirty_ = false;
}

void GradientView::draw() {
    drawn_ = true;
    if (!facts_.available) {
        ImGui::TextUnformatted("Gradient images need --diagnose and a scene to optimize.");
        return;
    }
    std::vector<const char*> names;
    for (const std::string& n : names_) names.push_back(n.c_str());
    ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x * 0.5f, 360.0f));
    if (ImGui::Combo("##parameter", &chosen_, names.data(), int(names.size()))) dirty_ = true;
    ImGui::SameLine();
    if (ImGui::Checkbox("edges", &edges_)) dirty_ = true;
    ImGui::SameLine();
    ImGui::TextDisabled("(what?)");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Each pixel's own share of d loss / d parameter (its components summed) in the selected\n"
                          "view, at the current values: blue < 0 < orange, full scale the 99th percentile of |share|.\n"
                          "Green: pixels whose silhouette-edge pairs carry visibility gradients. Summed over every\n"
                          "view the images are the parameter's gradient (adjoint-optimize --diagnose writes them).");
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float lines = ImGui::GetTextLineHeightWithSpacing() + 4.0f;
    float scale = std::max(std::min(avail.x / float(width_), (avail.y - lines) / float(height_)), 0.25f);
    if (scale >= 1.0f) scale = std::floor(scale);   // square pixels under nearest filtering
    const ImVec2 size{std::floor(float(width_) * scale), std::floor(float(height_) * scale)};
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};
    ImGui::SetCursorScreenPos(p);
    ImGui::InvisibleButton("gradient", size);
    zoom_.interact(p, size);
    const ImVec2 q{p.x + size.x, p.y + size.y};
    textures_.draw(id_, p, q, zoom_.uv0(), zoom_.uv1());
    facts_.rect = {p.x, p.y, q.x, q.y};
    ImGui::TextDisabled("view %u, iteration %u: full scale %s, sum %s, %u edge pixels", facts_.view,
                        facts_.iteration, format("%.3g", facts_.scale).c_str(), format("%.4g", facts_.sum).c_str(),
                        facts_.edge_pixels);
    ++facts_.frames_drawn;
}

} // namespace adjoint::studio
