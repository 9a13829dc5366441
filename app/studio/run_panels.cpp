// The run window (scene picker, environment file, run controls, optimizer settings applied by Reset), the
// loss curves, and the window of the parameter table (parameter_table.cpp) in tabs beside the textures', the
// gradient images' and the environment's panels.
#include "curves.h"
#include "environment.h"
#include "panels.h"

#include <adjoint/app/plugins.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace adjoint::studio {

namespace {

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
constexpr float kCurveWidth = 210.0f;   // the narrowest a curve is drawn beside another

} // namespace

void RunPanels::draw(float top) {
    draw_run_window(top);
    draw_loss_window(top);
    draw_parameters_window(top);
}

void RunPanels::load(const std::filesystem::path& file) {
    try {
        workspace_.load(file);
        run_.running = false;
        status_ = "loaded " + file.string();
    } catch (const Error& e) {
        status_ = e.what();
    }
}

bool RunPanels::pick_environment(const std::filesystem::path& map) {
    Session* session = workspace_.session();
    if (!session) {
        status_ = "no scene to light: open one first";
        return false;
    }
    try {
        workspace_.load(scene_with_environment(session->scene(), map));
        run_.running = false;
        status_ = "environment " + map.string();
        return true;
    } catch (const Error& e) {
        status_ = e.what();
        return false;
    }
}

// ---- run controls and settings ----------------------------------------------------------------------------

// The demo list shows the scene that is loaded: its demo, or its file's name when it is not one. Picking a
// demo opens it (a refused one leaves the loaded scene, and the list, as they were).
void RunPanels::draw_scene_picker() {
    Session* session = workspace_.session();
    if (session && session->scene().source_file != demo_source_) {
        demo_source_ = session->scene().source_file;
        demo_index_ = -1;
        std::error_code ec;   // a scene from elsewhere is simply not a demo
        for (size_t i = 0; i < demos_.size(); ++i)
            if (std::filesystem::equivalent(demos_[i], demo_source_, ec)) demo_index_ = int(i);
    }
    if (!session) picker_text_ = "(pick a scene)";
    else if (demo_index_ >= 0) picker_text_ = demos_[size_t(demo_index_)].filename().string();
    else picker_text_ = demo_source_.filename().string() + " (not a demo)";
    if (!demos_.empty()) {
        ImGui::SetNextItemWidth(tiles::kLeftWidth - 2.0f * ImGui::GetStyle().WindowPadding.x - 60.0f);
        if (ImGui::BeginCombo("scene##demo", picker_text_.c_str())) {
            for (int i = 0; i < int(demos_.size()); ++i)
                if (ImGui::Selectable(demos_[size_t(i)].filename().string().c_str(), i == demo_index_) && i != demo_index_)
                    load(demos_[size_t(i)]);
            ImGui::EndCombo();
        }
    }
    ImGui::SetNextItemWidth(180);
    ImGui::InputTextWithHint("##path", "any scene file (.json)", path_text_.data(), path_text_.size());
    ImGui::SameLine();
    if (ImGui::Button("Open file") && path_text_[0]) load(std::filesystem::path(path_text_.data()));
    if (Session* s = workspace_.session()) ImGui::TextWrapped("%s", s->scene().display_name.c_str());
}

void RunPanels::draw_environment_picker() {
    if (!workspace_.session() || !ImGui::CollapsingHeader("Environment file")) return;
    if (!environments_.empty()) {
        environment_index_ = std::clamp(environment_index_, 0, int(environments_.size()) - 1);
        ImGui::SetNextItemWidth(180);
        if (ImGui::BeginCombo("##environment", environments_[size_t(environment_index_)].filename().string().c_str())) {
            for (int i = 0; i < int(environments_.size()); ++i) {
                const std::filesystem::path& p = environments_[size_t(i)];
                if (ImGui::Selectable((p.filename().string() + "##" + p.string()).c_str(), i == environment_index_))
                    environment_index_ = i;
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.string().c_str());
            }
            ImGui::EndCombo();
        }
        ImGui::SameLine();
        if (ImGui::Button("Use##listed")) pick_environment(environments_[size_t(environment_index_)]);
    }
    ImGui::SetNextItemWidth(180);
    ImGui::InputTextWithHint("##envpath", ".exr / .hdr / .png, 2:1", environment_text_.data(), environment_text_.size());
    ImGui::SameLine();
    if (ImGui::Button("Use##path") && environment_text_[0]) pick_environment(environment_text_.data());
    ImGui::TextDisabled("reloads the scene with it as the environment\nlight's file (a light \"environment\" is\nadded when the scene has none)");
}

void RunPanels::draw_run_window(float top) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowPos({0, top}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({tiles::kLeftWidth, std::max(display.y - top, 50.0f)}, ImGuiCond_Always);
    ImGui::Begin("Run", nullptr, tiles::kFlags);
    draw_scene_picker();
    draw_environment_picker();
    ImGui::Separator();
    Session* session = workspace_.session();
    if (session && session->optimizable())
        draw_run_controls(*session);
    else if (session)
        ImGui::TextWrapped("This scene has no optimize block: the panels show its views.");
    if (!status_.empty()) ImGui::TextWrapped("%s", status_.c_str());
    ImGui::End();
}

void RunPanels::draw_run_controls(Session& session) {
    const auto& hist = session.history();
    ImGui::Text("iteration %u / %u", session.iteration(), session.total_iterations());
    if (!hist.empty()) {
        const HistoryPoint& last = hist.back();
        ImGui::Text("loss %.4e   PSNR %.2f dB", last.loss, last.psnr);
        if (last.param_error) ImGui::Text("parameter error %.3e", *last.param_error);
    }
    ImGui::Text("%.1f it/s   frame %.1f ms", session.iterations_per_second(), stats_.mean_frame_ms());
    if (ImGui::Button(run_.running ? "Pause" : "Run", {70, 0})) run_.running = !run_.running && !session.finished();
    ImGui::SameLine();
    if (ImGui::Button("Step", {70, 0}) && !session.finished()) {
        run_.running = false;
        if (session.advance(1, 0.0)) session.refresh({session.selected_view});
    }
    ImGui::SameLine();
    if (ImGui::Button("Reset", {70, 0})) {
        try {
            workspace_.reset();
            run_.running = false;
            status_.clear();
        } catch (const Error& e) {
            status_ = e.what();
        }
    }
    ImGui::SetNextItemWidth(150);
    ImGui::SliderInt("iterations / frame", &run_.iterations_per_frame, 1, 64);
    ImGui::SetNextItemWidth(150);
    ImGui::SliderFloat("frame budget (ms)", &run_.frame_budget_ms, 5.0f, 500.0f, "%.0f");
    if (session.out()) ImGui::TextWrapped("--out: %s", session.out()->string().c_str());
    draw_settings();
    if (!session.error().empty()) ImGui::TextColored({1.0f, 0.4f, 0.4f, 1.0f}, "%s", session.error().c_str());
}

void RunPanels::draw_settings() {
    app::Scene& edited = workspace_.edited();
    if (!edited.optimize) return;
    if (!ImGui::CollapsingHeader("Optimizer and visibility", ImGuiTreeNodeFlags_DefaultOpen)) return;
    app::Optimization& o = *edited.optimize;
    int visibility = int(edited.render.visibility);
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
    if (ImGui::Combo("visibility", &visibility, kVisibility, 3)) edited.render.visibility = app::Visibility(visibility);
    if (edited.render.visibility == app::Visibility::soft) {
        ImGui::SetNextItemWidth(120);
        ImGui::InputFloat("soft sigma", &edited.render.soft_sigma, 0, 0, "%.3g");
        ImGui::SetNextItemWidth(120);
        ImGui::InputFloat("soft gamma", &edited.render.soft_gamma, 0, 0, "%.3g");
        int faces = int(edited.render.soft_faces_per_pixel);
        ImGui::SetNextItemWidth(120);
        if (ImGui::InputInt("faces per pixel (0: all)", &faces))
            edited.render.soft_faces_per_pixel = uint32_t(std::clamp(faces, 0, int(app::kSoftMaxFacesPerPixel)));
    }
    ImGui::TextDisabled("applied by Reset");
}

// ---- loss curves ------------------------------------------------------------------------------------------

void RunPanels::draw_loss_window(float top) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float width = std::max(display.x - tiles::kLeftWidth - tiles::kRightWidth, 100.0f);
    const float height = std::max((display.y - top) * 0.5f, 50.0f);
    ImGui::SetNextWindowPos({tiles::kLeftWidth, top}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({width, height}, ImGuiCond_Always);
    ImGui::Begin("Loss", nullptr, tiles::kFlags);
    curves_.clear();
    Session* session = workspace_.session();
    if (session && !session->history().empty()) {
        const auto& hist = session->history();
        std::vector<Curve> curves{{"##loss", "loss: " + format("%.4e", hist.back().loss), {}, true},
                                  {"##psnr", "PSNR: " + format("%.2f", hist.back().psnr) + " dB", {}, false}};
        if (hist.back().param_error)
            curves.push_back({"##error", "parameter error: " + format("%.3e", *hist.back().param_error), {}, true});
        for (const auto& h : hist) {
            curves[0].values.push_back(h.loss > 0 ? float(std::log10(h.loss)) : -20.0f);
            curves[1].values.push_back(float(h.psnr));
            if (curves.size() > 2 && h.param_error)
                curves[2].values.push_back(*h.param_error > 0.0 ? float(std::log10(*h.param_error)) : -20.0f);
        }
        for (Curve& c : curves) c.first_iteration = hist.front().iteration;
        ImGui::SetNextItemWidth(120);
        ImGui::SliderFloat("smoothing", &smoothing_, 0.0f, 0.99f, "%.2f");
        // Side by side where each gets at least kCurveWidth, else in rows: a plot keeps its height either way.
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        const ImVec2 spacing = ImGui::GetStyle().ItemSpacing;
        const int columns = std::clamp(int(avail.x / kCurveWidth), 1, int(curves.size()));
        const int rows = (int(curves.size()) + columns - 1) / columns;
        const ImVec2 cell{(avail.x - float(columns - 1) * spacing.x) / float(columns),
                          (avail.y - float(rows) * (ImGui::GetTextLineHeightWithSpacing() + spacing.y)) / float(rows)};
        for (size_t i = 0; i < curves.size(); ++i) {
            if (i % size_t(columns) != 0) ImGui::SameLine();
            ImGui::BeginGroup();
            curves_.push_back(draw_curve(curves[i], cell, smoothing_));
            ImGui::EndGroup();
        }
    } else {
        ImGui::TextUnformatted(session && session->optimizable() ? "Run or step to see the loss." : "");
    }
    ImGui::End();
}

// ---- parameters -------------------------------------------------------------------------------------------

void RunPanels::draw_parameters_window(float top) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float width = std::max(display.x - tiles::kLeftWidth - tiles::kRightWidth, 100.0f);
    const float half = std::max((display.y - top) * 0.5f, 50.0f);
    ImGui::SetNextWindowPos({tiles::kLeftWidth, top + half}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({width, std::max(display.y - top - half, 50.0f)}, ImGuiCond_Always);
    ImGui::Begin("Parameters", nullptr, tiles::kFlags);
    Session* session = workspace_.session();
    if (!session) {
        ImGui::End();
        return;
    }
    EnvironmentView& environment = workspace_.environment();
    TextureView& textures = workspace_.texture_view();
    GradientView& gradients = workspace_.gradient_view();
    if (tabs_for_ != workspace_.opened()) {
        // A newly opened scene whose map is free opens on the map: it is what such a run recovers.
        tabs_for_ = workspace_.opened();
        if (pending_tab_.empty()) pending_tab_ = environment.free() ? "Environment" : "Parameters";
    }
    if (textures.take_tab_request()) pending_tab_ = "Textures";   // a thumbnail was clicked
    if (!environment.present() && !textures.any() && !gradients.available()) {
        draw_parameter_table(*session);
    } else if (ImGui::BeginTabBar("##lower")) {
        const auto tab = [&](const char* name, auto&& body) {
            const ImGuiTabItemFlags flags = pending_tab_ == name ? ImGuiTabItemFlags_SetSelected : 0;
            if (ImGui::BeginTabItem(name, nullptr, flags)) {
                body();
                ImGui::EndTabItem();
            }
        };
        tab("Parameters", [&] { draw_parameter_table(*session); });
        if (textures.any()) tab("Textures", [&] { textures.draw(); });
        if (gradients.available()) tab("Gradient images", [&] { gradients.draw(); });
        if (environment.present()) tab("Environment", [&] { environment.draw(*session); });
        ImGui::EndTabBar();
    }
    pending_tab_.clear();
    ImGui::End();
}

} // namespace adjoint::studio
