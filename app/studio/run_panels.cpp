// The run window (scene picker, environment file, run controls, optimizer settings applied by Reset), the
// loss curves and the parameter table with live learning rates (beside the environment panel, in tabs).
#include "environment.h"
#include "panels.h"

#include <adjoint/app/plugins.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace adjoint::studio {

namespace {

// The path, and for a material's parameter the material's model ("materials.ball.roughness (pbr)"); the
// state's index is the scene's optimize.parameters index.
std::string parameter_label(const app::Scene& scene, size_t i, const app::ParameterState& p) {
    const bool material = p.kind == app::ParameterKind::material_value || p.kind == app::ParameterKind::material_texture;
    if (!material || !scene.optimize || i >= scene.optimize->parameters.size()) return p.path;
    return p.path + " (" + scene.materials.at(scene.optimize->parameters[i].target).model + ")";
}

std::string describe_value(const std::vector<float>& v, const app::ParameterState& p) {
    if (p.kind == app::ParameterKind::material_texture || p.kind == app::ParameterKind::light_texture)
        return "texture " + std::to_string(p.texture_width) + "x" + std::to_string(p.texture_height);
    if (v.size() > 4) return std::to_string(v.size()) + " values";
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format("%.3g", v[i]);
    return s + "]";
}

// A log10 axis of whole decades around the values.
std::pair<float, float> decades(const std::vector<float>& v) {
    auto [a, b] = std::minmax_element(v.begin(), v.end());
    return {std::floor(*a), std::max(std::ceil(*b), std::floor(*a) + 1.0f)};
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

void RunPanels::draw_scene_picker() {
    Session* session = workspace_.session();
    if (session && session->scene().source_file != demo_source_) {
        demo_source_ = session->scene().source_file;
        std::error_code ec;   // a scene from elsewhere is simply not a demo
        for (size_t i = 0; i < demos_.size(); ++i)
            if (std::filesystem::equivalent(demos_[i], demo_source_, ec)) demo_index_ = int(i);
    }
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
    Session* session = workspace_.session();
    if (session && !session->history().empty()) {
        const auto& hist = session->history();
        std::vector<float> loss, psnr, err;
        for (const auto& h : hist) {
            loss.push_back(h.loss > 0 ? float(std::log10(h.loss)) : -20.0f);
            psnr.push_back(float(h.psnr));
            if (h.param_error) err.push_back(h.param_error > 0.0 ? float(std::log10(*h.param_error)) : -20.0f);
        }
        const int rows = err.empty() ? 2 : 3;
        const float plot_h = std::max(
            (ImGui::GetContentRegionAvail().y - rows * ImGui::GetTextLineHeightWithSpacing()) / rows - 6.0f, 20.0f);
        const float plot_w = ImGui::GetContentRegionAvail().x;
        auto [l0, l1] = decades(loss);
        ImGui::Text("loss, log10 axis 1e%.0f .. 1e%.0f   (last %.4e)", l0, l1, hist.back().loss);
        ImGui::PlotLines("##loss", loss.data(), int(loss.size()), 0, nullptr, l0, l1, {plot_w, plot_h});
        ImGui::Text("PSNR (dB), last %.2f", hist.back().psnr);
        ImGui::PlotLines("##psnr", psnr.data(), int(psnr.size()), 0, nullptr, FLT_MAX, FLT_MAX, {plot_w, plot_h});
        if (!err.empty()) {
            auto [e0, e1] = decades(err);
            ImGui::Text("parameter error, log10 axis 1e%.0f .. 1e%.0f   (last %.3e)", e0, e1, *hist.back().param_error);
            ImGui::PlotLines("##error", err.data(), int(err.size()), 0, nullptr, e0, e1, {plot_w, plot_h});
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
    EnvironmentView& environment = workspace_.environment();
    if (session && environment.present()) {
        // A newly opened scene whose map is free opens on the map: it is what such a run recovers.
        const bool choose = tabs_for_ != workspace_.opened();
        tabs_for_ = workspace_.opened();
        const bool map_first = choose && environment.free();
        if (ImGui::BeginTabBar("##lower")) {
            if (ImGui::BeginTabItem("Parameters", nullptr, choose && !map_first ? ImGuiTabItemFlags_SetSelected : 0)) {
                draw_parameter_table(*session);
                ImGui::EndTabItem();
            }
            if (ImGui::BeginTabItem("Environment", nullptr, map_first ? ImGuiTabItemFlags_SetSelected : 0)) {
                environment.draw(*session);
                ImGui::EndTabItem();
            }
            ImGui::EndTabBar();
        }
    } else if (session) {
        draw_parameter_table(*session);
    }
    ImGui::End();
}

void RunPanels::draw_parameter_table(Session& session) {
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
    if (session.optimizable() && ImGui::BeginTable("params", 6, flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("parameter", 0, 2.2f);
        ImGui::TableSetupColumn("value", 0, 1.6f);
        ImGui::TableSetupColumn("true value", 0, 1.6f);
        ImGui::TableSetupColumn("error", 0, 0.8f);
        ImGui::TableSetupColumn("|gradient|", 0, 0.8f);
        ImGui::TableSetupColumn("learning rate", 0, 1.0f);
        ImGui::TableHeadersRow();
        const auto& params = session.parameters();
        for (size_t i = 0; i < params.size(); ++i) {
            const app::ParameterState& p = params[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(parameter_label(session.scene(), i, p).c_str());
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
                session.set_learning_rate(i, lr);
                workspace_.edited().optimize->parameters.at(i).lr = lr;
            }
            ImGui::PopID();
        }
        ImGui::EndTable();
    }
}

} // namespace adjoint::studio
