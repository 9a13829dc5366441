// The studio's panels, tiled to the window: the images (target | current | |diff| | dL/dI, zoomable) on top;
// below, the run controls with the settings, the loss curves over the parameter table, and the orbit view
// with the grid of views. The image windows are ImagePanels (panels.cpp), the rest RunPanels (run_panels.cpp).
#pragma once
#include "curves.h"
#include "workspace.h"
#include "zoom_pan.h"

#include <imgui.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

namespace adjoint::studio {

// The run as the controls set it and the frame loop follows it.
struct RunState {
    bool running = false;
    int iterations_per_frame = 4;
    float frame_budget_ms = 40.0f;
};

// For the run window and the closing summary.
struct FrameStats {
    uint64_t frames = 0;            // drawn
    double frame_ms_total = 0;
    uint32_t iterations = 0;
    double iteration_ms_total = 0;
    double mean_frame_ms() const { return frames ? frame_ms_total / double(frames) : 0.0; }
};

// The tiles' shared geometry.
namespace tiles {
inline constexpr ImGuiWindowFlags kFlags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                           ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
inline constexpr float kGap = 8.0f;
inline constexpr float kLeftWidth = 330.0f, kRightWidth = 290.0f;
} // namespace tiles

// The parameter table's cells as the last frame drew them, and how many were narrower than their text.
struct TableFacts {
    std::vector<std::vector<std::string>> rows;
    uint32_t clipped_cells = 0;
};

// The target / current flicker: on, and whether the current panel showed the target in the last frame.
struct FlickerFacts {
    bool on = false, shows_target = false;
};

// One number through a printf format ("%.3g"), for captions and table cells.
std::string format(const char* fmt, double v);

// The images window along the top and the views window (orbit view, grid of views) on the right.
class ImagePanels {
public:
    ImagePanels(Workspace& workspace, Textures& textures) : workspace_(workspace), textures_(textures) {}
    // Returns where the windows below the images start.
    float draw_images();
    void draw_views(float top);
    // The four panels' places in the last frame: target, current, diff, gradient.
    const std::array<PanelRect, 4>& panel_rects() const { return panel_rects_; }
    // The current panel alternating between the current image and the target (every kFlickerFrames frames),
    // so that a small difference is seen moving.
    void set_flicker(bool on) { flicker_.on = on; }
    const FlickerFacts& flicker() const { return flicker_; }
    // The lights drawn over the orbit view in the last frame, and the shadow switches under it.
    const std::vector<std::string>& orbit_lights() const { return orbit_lights_; }
    size_t shadow_switches() const { return shadow_switches_; }

private:
    // `toggle`: a checkbox after the detail line (the current panel's flicker).
    void draw_image_panel(Textures::Id texture, const char* caption, const std::string& detail, ImVec2 size,
                          int index, bool* toggle = nullptr);
    void draw_current_panel(const std::array<Textures::Id, 4>& ids, ImVec2 size);
    void draw_orbit(float grid_height);
    void draw_lights(ImVec2 corner, float side);
    void draw_grid();

    Workspace& workspace_;
    Textures& textures_;
    ZoomPan zoom_;                      // the image panels' shared zoom and centre
    std::array<PanelRect, 4> panel_rects_{};
    std::vector<std::string> orbit_lights_;
    size_t shadow_switches_ = 0;
    int grid_show_ = 1;                 // views grid: 0 target, 1 current, 2 |diff|, 3 gradient
    FlickerFacts flicker_;
};

// The run window (scene picker, environment file, run controls, settings) on the left; the loss curves and,
// below them, the parameter table (and the environment panel in a tab beside it) in the middle.
class RunPanels {
public:
    RunPanels(Workspace& workspace, RunState& run, const FrameStats& stats, std::vector<std::filesystem::path> demos,
              std::vector<std::filesystem::path> environments)
        : workspace_(workspace), run_(run), stats_(stats), demos_(std::move(demos)),
          environments_(std::move(environments)) {}
    void draw(float top);
    // Reloads the scene with another environment file (scene_with_environment), as the scene picker loads a
    // scene; a refusal is left in status() and the scene stays. True when it was reloaded.
    bool pick_environment(const std::filesystem::path& map);
    const std::string& status() const { return status_; }
    // Shows the lower window's tab of this name in the next frame ("Parameters", "Textures", "Gradient images",
    // "Environment"), as a click on it would.
    void select_tab(std::string name) { pending_tab_ = std::move(name); }
    // What the scene picker shows: the loaded scene's demo, or its file's name and "(not a demo)".
    const std::string& picker_text() const { return picker_text_; }
    const TableFacts& table() const { return table_; }
    const std::vector<CurveFacts>& curves() const { return curves_; }

private:
    void draw_run_window(float top);
    void draw_scene_picker();
    void draw_environment_picker();
    void draw_parameter_table(Session& session);   // parameter_table.cpp
    void table_cell(const std::string& text);
    void draw_run_controls(Session& session);
    void draw_settings();
    void draw_loss_window(float top);
    void draw_parameters_window(float top);
    void load(const std::filesystem::path& file);

    Workspace& workspace_;
    RunState& run_;
    const FrameStats& stats_;
    std::vector<std::filesystem::path> demos_;
    int demo_index_ = -1;                 // the loaded scene's demo, -1 when it is none
    std::filesystem::path demo_source_;   // the scene demo_index_ was last matched against
    std::string picker_text_;
    TableFacts table_;
    std::vector<CurveFacts> curves_;      // the loss window's curves as last drawn
    float smoothing_ = 0.6f;              // the curves' moving average: weight on the past
    std::array<char, 512> path_text_{};
    std::string status_;                  // the last message (a refused scene, ...)
    std::vector<std::filesystem::path> environments_;   // the environment files offered
    int environment_index_ = 0;
    std::array<char, 512> environment_text_{};
    uint64_t tabs_for_ = UINT64_MAX;      // the session the lower tabs were last chosen for
    std::string pending_tab_;             // the tab to select in the next frame
};

} // namespace adjoint::studio
