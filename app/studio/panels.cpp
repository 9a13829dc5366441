// The studio's panels, tiled to the window: images (target | current | |diff| | dL/dI, zoomable) on top;
// below, the run controls and settings, the loss curves and parameter table, and the orbit view with the
// grid of views.
#include "studio.h"

#include <adjoint/app/plugins.h>

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

namespace adjoint::studio {

namespace {

constexpr ImGuiWindowFlags kTile = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings;
constexpr float kGap = 8.0f;
constexpr float kLeftWidth = 330.0f, kRightWidth = 290.0f;

std::string format(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

std::string describe_value(const std::vector<float>& v, const app::ParameterState& p) {
    if (p.kind == app::ParameterKind::material_albedo_texture)
        return "texture " + std::to_string(p.texture_width) + "x" + std::to_string(p.texture_height);
    if (v.size() > 4) return std::to_string(v.size()) + " values";
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format("%.3g", v[i]);
    return s + "]";
}

// The images window: title bar, caption line, the panels, detail line.
float image_layout_height(float panel_h) {
    const ImGuiStyle& style = ImGui::GetStyle();
    return ImGui::GetFrameHeight() + 2.0f * style.WindowPadding.y + 2.0f * ImGui::GetTextLineHeightWithSpacing() +
           2.0f * style.ItemSpacing.y + panel_h;
}

// A combo over a plug-in registry; true when the choice changed (`name` then holds the new one).
template <typename Model>
bool plugin_combo(const char* label, std::span<const Model* const> models, std::string& name) {
    bool changed = false;
    if (ImGui::BeginCombo(label, name.c_str())) {
        for (const Model* m : models) {
            const bool selected = m->name == name;
            if (ImGui::Selectable(std::string(m->name).c_str(), selected) && !selected) {
                name = std::string(m->name);
                changed = true;
            }
        }
        ImGui::EndCombo();
    }
    return changed;
}

// The optimizer's own keys (adam's betas and eps, sgd's momentum), one field per number.
void optimizer_settings(app::Optimization& o) {
    uint32_t at = 0;
    for (const app::OptimizerKey& k : app::optimizer_model(o.optimizer).keys) {
        for (uint32_t i = 0; i < k.count; ++i) {
            const std::string label = std::string(k.name) + (k.count > 1 ? "[" + std::to_string(i) + "]" : "");
            ImGui::SetNextItemWidth(120);
            ImGui::InputFloat(label.c_str(), &o.optimizer_settings[at + i], 0, 0, "%.4g");
        }
        at += k.count;
    }
}
const char* kVisibility[] = {"hard", "antialias", "soft"};
const char* kShow[] = {"target", "current", "|diff|", "dL/dI"};

} // namespace

void Studio::draw_ui() {
    draw_images_window();
    draw_run_window();
    draw_plots_window();
    draw_parameters_window();
    draw_views_window();
}

// ---- images -----------------------------------------------------------------------------------------------

void Studio::draw_image_panel(size_t texture, const char* caption, const std::string& detail, ImVec2 size, int index) {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(caption);
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};   // whole pixels: at 1:1 every texel lands on one pixel
    ImGui::SetCursorScreenPos(p);
    ImGui::PushID(index);
    ImGui::InvisibleButton("image", size);
    ImGui::PopID();
    const ImGuiIO& io = ImGui::GetIO();
    const float span = 1.0f / zoom_;
    if (ImGui::IsItemHovered() && io.MouseWheel != 0.0f) {
        // Zoom about the point under the cursor (all four panels share zoom and centre).
        const float fx = (io.MousePos.x - p.x) / size.x, fy = (io.MousePos.y - p.y) / size.y;
        const float u = centre_.x + (fx - 0.5f) * span, v = centre_.y + (fy - 0.5f) * span;
        zoom_ = std::clamp(zoom_ * std::pow(1.25f, io.MouseWheel), 1.0f, 64.0f);
        const float s2 = 1.0f / zoom_;
        centre_ = {u - (fx - 0.5f) * s2, v - (fy - 0.5f) * s2};
    }
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f)) {
        centre_.x -= io.MouseDelta.x / size.x * span;
        centre_.y -= io.MouseDelta.y / size.y * span;
    }
    if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        zoom_ = 1.0f;
        centre_ = {0.5f, 0.5f};
    }
    const float s = 1.0f / zoom_;
    centre_.x = std::clamp(centre_.x, s * 0.5f, 1.0f - s * 0.5f);
    centre_.y = std::clamp(centre_.y, s * 0.5f, 1.0f - s * 0.5f);
    const ImVec2 uv0{centre_.x - s * 0.5f, centre_.y - s * 0.5f}, uv1{centre_.x + s * 0.5f, centre_.y + s * 0.5f};
    ImVec2 q{p.x + size.x, p.y + size.y};
    textures_->draw(texture, p, q, uv0, uv1);
    panel_rects_[size_t(index)] = {p.x, p.y, q.x, q.y};
    ImGui::TextUnformatted(detail.c_str());
    ImGui::EndGroup();
}

void Studio::draw_images_window() {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float w = session_ ? float(session_->width()) : 256.0f, h = session_ ? float(session_->height()) : 256.0f;
    // Never magnified, shrunk to fit four across (zoom for detail).
    const float avail = display.x - 2.0f * ImGui::GetStyle().WindowPadding.x - 3.0f * kGap - 4.0f;
    const float scale = std::min(1.0f, std::max(avail, 16.0f) / (4.0f * w));
    const ImVec2 size{std::floor(w * scale), std::floor(h * scale)};
    ImGui::SetNextWindowPos({0, 0}, ImGuiCond_Always);
    tiles_top_ = image_layout_height(size.y);
    ImGui::SetNextWindowSize({display.x, tiles_top_}, ImGuiCond_Always);
    const uint32_t view = session_ ? session_->selected_view : 0;
    std::string title = "Images";
    if (session_ && session_->view_count() > 1) title += " - view " + std::to_string(view);
    title += "###images";
    ImGui::Begin(title.c_str(), nullptr, kTile | ImGuiWindowFlags_NoScrollbar);
    if (!session_) {
        ImGui::TextUnformatted("No scene: pick one in the Run window.");
        ImGui::End();
        return;
    }
    const ViewImages& im = session_->view(view);
    const auto& ids = view_textures_.at(view).ids;
    const std::string zoom = zoom_ > 1.0f ? format("zoom %.1fx (wheel, drag; double-click resets)", zoom_)
                                          : std::string("wheel: zoom, drag: pan");
    draw_image_panel(ids[0], "target", zoom, size, 0);
    ImGui::SameLine(0, kGap);
    draw_image_panel(ids[1], "current", "iteration " + std::to_string(session_->iteration()), size, 1);
    ImGui::SameLine(0, kGap);
    draw_image_panel(ids[2], "|current - target|", "inferno, full scale " + format("%.3g", im.scale.max_diff), size, 2);
    ImGui::SameLine(0, kGap);
    draw_image_panel(ids[3], "dL/dI (sum over RGB)", "blue < 0 < red (sqrt scale), max " + format("%.3g", im.scale.max_gradient),
                     size, 3);
    ImGui::End();
}

// ---- run controls and settings ----------------------------------------------------------------------------

void Studio::draw_run_window() {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float y = tiles_top_;
    ImGui::SetNextWindowPos({0, y}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({kLeftWidth, std::max(display.y - y, 50.0f)}, ImGuiCond_Always);
    ImGui::Begin("Run", nullptr, kTile);

    // Scene picker: the demos, or any path.
    if (!demos_.empty()) {
        demo_index_ = std::clamp(demo_index_, 0, int(demos_.size()) - 1);
        std::string current = demos_[size_t(demo_index_)].filename().string();
        ImGui::SetNextItemWidth(180);
        if (ImGui::BeginCombo("##demo", current.c_str())) {
            for (int i = 0; i < int(demos_.size()); ++i)
                if (ImGui::Selectable(demos_[size_t(i)].filename().string().c_str(), i == demo_index_)) demo_index_ = i;
            ImGui::EndCombo();
        }
        ImGui::SameLine();
        if (ImGui::Button("Open demo")) load(demos_[size_t(demo_index_)]);
    }
    ImGui::SetNextItemWidth(180);
    ImGui::InputTextWithHint("##path", "any scene file (.json)", path_text_.data(), path_text_.size());
    ImGui::SameLine();
    if (ImGui::Button("Open file") && path_text_[0]) load(std::filesystem::path(path_text_.data()));
    if (session_) ImGui::TextWrapped("%s", session_->scene().display_name.c_str());
    ImGui::Separator();

    if (session_ && session_->optimizable()) {
        const auto& hist = session_->history();
        ImGui::Text("iteration %u / %u", session_->iteration(), session_->total_iterations());
        if (!hist.empty()) {
            const HistoryPoint& last = hist.back();
            ImGui::Text("loss %.4e   PSNR %.2f dB", last.loss, last.psnr);
            if (last.param_error) ImGui::Text("parameter error %.3e", *last.param_error);
        }
        ImGui::Text("%.1f it/s   frame %.1f ms", session_->iterations_per_second(),
                    frames_ ? frame_ms_total_ / double(frames_) : 0.0);
        if (ImGui::Button(running_ ? "Pause" : "Run", {70, 0})) running_ = !running_ && !session_->finished();
        ImGui::SameLine();
        if (ImGui::Button("Step", {70, 0}) && !session_->finished()) {
            running_ = false;
            if (session_->advance(1, 0.0)) session_->refresh({session_->selected_view});
        }
        ImGui::SameLine();
        if (ImGui::Button("Reset", {70, 0})) {
            try {
                session_->reset(edited_);
                orbit_iteration_ = UINT32_MAX;
                running_ = false;
                status_.clear();
            } catch (const Error& e) {
                status_ = e.what();
            }
        }
        ImGui::SetNextItemWidth(150);
        ImGui::SliderInt("iterations / frame", &iterations_per_frame_, 1, 64);
        ImGui::SetNextItemWidth(150);
        ImGui::SliderFloat("frame budget (ms)", &frame_budget_ms_, 5.0f, 500.0f, "%.0f");
        if (session_->out()) ImGui::TextWrapped("--out: %s", session_->out()->string().c_str());
        draw_settings();
        if (!session_->error().empty()) ImGui::TextColored({1.0f, 0.4f, 0.4f, 1.0f}, "%s", session_->error().c_str());
    } else if (session_) {
        ImGui::TextWrapped("This scene has no optimize block: the panels show its views.");
    }
    if (!status_.empty()) ImGui::TextWrapped("%s", status_.c_str());
    ImGui::End();
}

void Studio::draw_settings() {
    if (!edited_.optimize) return;
    if (!ImGui::CollapsingHeader("Optimizer and visibility", ImGuiTreeNodeFlags_DefaultOpen)) return;
    app::Optimization& o = *edited_.optimize;
    int visibility = int(edited_.render.visibility);
    ImGui::SetNextItemWidth(120);
    if (plugin_combo("optimizer", app::optimizer_models(), o.optimizer)) {
        uint32_t at = 0;   // the new optimizer's defaults
        for (const app::OptimizerKey& k : app::optimizer_model(o.optimizer).keys)
            for (uint32_t i = 0; i < k.count; ++i) o.optimizer_settings[at++] = k.defaults[i];
    }
    ImGui::SetNextItemWidth(120);
    plugin_combo("loss", app::loss_models(), o.loss);
    optimizer_settings(o);
    ImGui::SetNextItemWidth(120);
    ImGui::InputFloat("lr decay", &o.lr_decay, 0, 0, "%.5g");
    int iterations = int(o.iterations), views = int(o.views_per_iteration), seed = int(o.seed);
    ImGui::SetNextItemWidth(120);
    if (ImGui::InputInt("iterations", &iterations)) o.iterations = uint32_t(std::max(iterations, 0));
    ImGui::SetNextItemWidth(120);
    if (ImGui::InputInt("views / iteration", &views)) o.views_per_iteration = uint32_t(std::max(views, 1));
    ImGui::SetNextItemWidth(120);
    if (ImGui::InputInt("seed", &seed)) o.seed = uint64_t(std::max(seed, 0));
    ImGui::SetNextItemWidth(120);
    if (ImGui::Combo("visibility", &visibility, kVisibility, 3)) edited_.render.visibility = app::Visibility(visibility);
    if (edited_.render.visibility == app::Visibility::soft) {
        ImGui::SetNextItemWidth(120);
        ImGui::InputFloat("soft sigma", &edited_.render.soft_sigma, 0, 0, "%.3g");
        ImGui::SetNextItemWidth(120);
        ImGui::InputFloat("soft gamma", &edited_.render.soft_gamma, 0, 0, "%.3g");
    }
    ImGui::TextDisabled("applied by Reset");
}

// ---- loss curves ------------------------------------------------------------------------------------------

void Studio::draw_plots_window() {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float y = tiles_top_;
    const float width = std::max(display.x - kLeftWidth - kRightWidth, 100.0f);
    const float height = std::max((display.y - y) * 0.5f, 50.0f);
    ImGui::SetNextWindowPos({kLeftWidth, y}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({width, height}, ImGuiCond_Always);
    ImGui::Begin("Loss", nullptr, kTile);
    if (session_ && !session_->history().empty()) {
        const auto& hist = session_->history();
        std::vector<float> loss, psnr, err;
        for (const auto& h : hist) {
            loss.push_back(h.loss > 0 ? float(std::log10(h.loss)) : -20.0f);
            psnr.push_back(float(h.psnr));
            if (h.param_error) err.push_back(h.param_error > 0.0 ? float(std::log10(*h.param_error)) : -20.0f);
        }
        const int rows = err.empty() ? 2 : 3;
        const float plot_h = std::max((ImGui::GetContentRegionAvail().y - rows * ImGui::GetTextLineHeightWithSpacing()) / rows - 6.0f, 20.0f);
        const float plot_w = ImGui::GetContentRegionAvail().x;
        auto lo_hi = [](const std::vector<float>& v) {
            auto [a, b] = std::minmax_element(v.begin(), v.end());
            return std::pair<float, float>{std::floor(*a), std::max(std::ceil(*b), std::floor(*a) + 1.0f)};
        };
        auto [l0, l1] = lo_hi(loss);
        ImGui::Text("loss, log10 axis 1e%.0f .. 1e%.0f   (last %.4e)", l0, l1, hist.back().loss);
        ImGui::PlotLines("##loss", loss.data(), int(loss.size()), 0, nullptr, l0, l1, {plot_w, plot_h});
        ImGui::Text("PSNR (dB), last %.2f", hist.back().psnr);
        ImGui::PlotLines("##psnr", psnr.data(), int(psnr.size()), 0, nullptr, FLT_MAX, FLT_MAX, {plot_w, plot_h});
        if (!err.empty()) {
            auto [e0, e1] = lo_hi(err);
            ImGui::Text("parameter error, log10 axis 1e%.0f .. 1e%.0f   (last %.3e)", e0, e1, *hist.back().param_error);
            ImGui::PlotLines("##error", err.data(), int(err.size()), 0, nullptr, e0, e1, {plot_w, plot_h});
        }
    } else {
        ImGui::TextUnformatted(session_ && session_->optimizable() ? "Run or step to see the loss." : "");
    }
    ImGui::End();
}

// ---- parameters -------------------------------------------------------------------------------------------

void Studio::draw_parameters_window() {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float y0 = tiles_top_;
    const float width = std::max(display.x - kLeftWidth - kRightWidth, 100.0f);
    const float half = std::max((display.y - y0) * 0.5f, 50.0f);
    ImGui::SetNextWindowPos({kLeftWidth, y0 + half}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({width, std::max(display.y - y0 - half, 50.0f)}, ImGuiCond_Always);
    ImGui::Begin("Parameters", nullptr, kTile);
    if (session_ && session_->optimizable()) {
        const auto& params = session_->parameters();
        const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                      ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
        if (ImGui::BeginTable("params", 6, flags)) {
            ImGui::TableSetupScrollFreeze(0, 1);
            ImGui::TableSetupColumn("parameter", 0, 2.2f);
            ImGui::TableSetupColumn("value", 0, 1.6f);
            ImGui::TableSetupColumn("true value", 0, 1.6f);
            ImGui::TableSetupColumn("error", 0, 0.8f);
            ImGui::TableSetupColumn("|gradient|", 0, 0.8f);
            ImGui::TableSetupColumn("learning rate", 0, 1.0f);
            ImGui::TableHeadersRow();
            for (size_t i = 0; i < params.size(); ++i) {
                const app::ParameterState& p = params[i];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(p.path.c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(describe_value(p.value, p).c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(p.true_value ? describe_value(*p.true_value, p).c_str() : "-");
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(p.error ? format("%.3e", *p.error).c_str() : "-");
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format("%.3e", p.grad_norm).c_str());
                ImGui::TableNextColumn();
                float lr = p.lr;
                ImGui::PushID(int(i));
                ImGui::SetNextItemWidth(-FLT_MIN);
                if (ImGui::InputFloat("##lr", &lr, 0, 0, "%.4g", ImGuiInputTextFlags_EnterReturnsTrue) && lr > 0.0f &&
                    std::isfinite(lr)) {
                    session_->set_learning_rate(i, lr);
                    edited_.optimize->parameters.at(i).lr = lr;
                }
                ImGui::PopID();
            }
            ImGui::EndTable();
        }
    }
    ImGui::End();
}

// ---- orbit view and the grid of views ---------------------------------------------------------------------

void Studio::draw_views_window() {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float y = tiles_top_;
    const float x = std::max(display.x - kRightWidth, kLeftWidth + 100.0f);
    ImGui::SetNextWindowPos({x, y}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({std::max(display.x - x, 50.0f), std::max(display.y - y, 50.0f)}, ImGuiCond_Always);
    ImGui::Begin("Views", nullptr, kTile);
    if (session_) {
        ImGui::TextUnformatted("orbit (drag: turn, wheel: distance)");
        // The grid of views below keeps its room: the orbit view shrinks first.
        const float avail_x = ImGui::GetContentRegionAvail().x;
        float grid_h = 0.0f;
        if (session_->view_count() > 1) {
            const int columns = std::max(1, int(avail_x / 68.0f));
            const float thumb = std::floor(avail_x / float(columns)) - 4.0f;
            const uint32_t rows = (session_->view_count() + uint32_t(columns) - 1) / uint32_t(columns);
            grid_h = float(rows) * (thumb * float(session_->height()) / float(session_->width()) + 4.0f) +
                     3.0f * ImGui::GetFrameHeightWithSpacing();
        }
        const float room = ImGui::GetContentRegionAvail().y - grid_h - ImGui::GetFrameHeightWithSpacing();
        const float side = std::floor(std::max(std::min({avail_x, float(orbit_->size()), room}), 64.0f));
        ImVec2 p = ImGui::GetCursorScreenPos();
        p = {std::floor(p.x), std::floor(p.y)};
        ImGui::SetCursorScreenPos(p);
        ImGui::InvisibleButton("orbit", {side, side});
        const ImGuiIO& io = ImGui::GetIO();
        if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f) &&
            (io.MouseDelta.x != 0.0f || io.MouseDelta.y != 0.0f))
            orbit_->turn(io.MouseDelta.x, io.MouseDelta.y);
        if (ImGui::IsItemHovered() && io.MouseWheel != 0.0f) orbit_->zoom(io.MouseWheel);
        if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) orbit_->reset(session_->scene());
        textures_->draw(orbit_texture_, p, {p.x + side, p.y + side});
        ImGui::Checkbox("follow the run", &orbit_follows_);

        if (session_->view_count() > 1) {
            ImGui::Separator();
            ImGui::Text("%u views (click one to inspect it)", session_->view_count());
            for (int i = 0; i < 4; ++i) {
                if (i) ImGui::SameLine();
                ImGui::RadioButton(kShow[i], &grid_show_, i);
            }
            const float avail = ImGui::GetContentRegionAvail().x;
            const int columns = std::max(1, int(avail / 68.0f));
            const float thumb = std::floor(avail / float(columns)) - 4.0f;
            const float aspect = float(session_->height()) / float(session_->width());
            for (uint32_t v = 0; v < session_->view_count(); ++v) {
                if (v % uint32_t(columns) != 0) ImGui::SameLine(0, 4.0f);
                ImVec2 q = ImGui::GetCursorScreenPos();
                ImGui::PushID(int(v));
                if (ImGui::InvisibleButton("view", {thumb, thumb * aspect})) {
                    session_->selected_view = v;
                    session_->refresh({v});
                }
                ImGui::PopID();
                textures_->draw(view_textures_.at(v).ids[size_t(grid_show_)], q, {q.x + thumb, q.y + thumb * aspect});
                if (v == session_->selected_view)
                    ImGui::GetWindowDrawList()->AddRect(q, {q.x + thumb, q.y + thumb * aspect}, IM_COL32(255, 200, 0, 255));
            }
        }
    }
    ImGui::End();
}

} // namespace adjoint::studio
