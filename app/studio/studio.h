// adjoint-studio: the window (GLFW), the engine's device shared with the swapchain, Dear ImGui, and the
// panels over one Session. studio.cpp holds set-up and the frame loop; panels.cpp the panels.
//
// Test hooks (environment): ADJOINT_STUDIO_SIZE=WxH (the window's first size, default 1280x800),
// ADJOINT_STUDIO_RESIZE=WxH@F (resize the window at frame F; the run waits until the new size shows),
// ADJOINT_STUDIO_LAYOUT=FILE (at exit, the window's size and the image panels' rectangles, JSON),
// ADJOINT_STUDIO_CLOSE_AT=F (at frame F, close the window as its close button does),
// ADJOINT_STUDIO_MINIMIZE=N@F (at frame F, minimize the window for N frames, then restore it),
// ADJOINT_STUDIO_LEAK_AT_EXIT=1 (leave a VkSampler alive at exit: the validation layer's report of it at
// vkDestroyDevice must fail the run).
#pragma once
#include "orbit.h"
#include "presenter.h"
#include "session.h"
#include "textures.h"

#include <adjoint/app/cli.h>

#include <array>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

struct GLFWwindow;

namespace adjoint::studio {

struct WindowSize {
    uint32_t width = 0, height = 0;
};

struct ScriptedResize {
    WindowSize size;
    uint32_t frame = 0;
};

struct ScriptedMinimize {
    uint32_t frames = 0;   // at least 1
    uint32_t frame = 0;
};

// "WxH", "WxH@F", "N@F" and "F"; Error naming `what` otherwise.
WindowSize parse_window_size(const std::string& text, const std::string& what);
ScriptedResize parse_scripted_resize(const std::string& text, const std::string& what);
ScriptedMinimize parse_scripted_minimize(const std::string& text, const std::string& what);
uint32_t parse_frame(const std::string& text, const std::string& what);

struct StudioConfig {
    app::StudioOptions options;
    std::optional<app::Scene> scene;         // loaded (and checked) before the window opens
    std::filesystem::path scenes_dir;        // the demos offered by the scene picker
    WindowSize size{1280, 800};
    std::optional<ScriptedResize> resize;
    std::optional<std::filesystem::path> layout_file;
    std::optional<uint32_t> close_at;
    std::optional<ScriptedMinimize> minimize;
    bool leak_at_exit = false;
};

// The whole program after argument parsing and scene loading; returns the exit code. Assumes a display.
int run_studio(StudioConfig config, std::ostream& out, std::ostream& err);

// A panel's place in the window, in window pixels: [x0, x1) x [y0, y1).
struct PanelRect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

class Studio {
public:
    Studio(StudioConfig config, std::ostream& out, std::ostream& err);
    ~Studio();
    int run();

private:
    // ---- studio.cpp ----
    void create_window();
    void create_device();
    void init_imgui();
    void load(const std::filesystem::path& file);   // the scene picker
    void open_session(app::Scene scene, std::optional<std::filesystem::path> out);
    void make_textures();
    void update_textures();
    VkExtent2D drawable_size() const;                // zero while the window is minimized
    bool frame(bool capture, VkExtent2D size);       // false when nothing could be drawn
    void write_layout(const std::filesystem::path& file) const;
    int shut_down(int code);
    static VKAPI_ATTR VkBool32 VKAPI_CALL on_exit_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                          VkDebugUtilsMessageTypeFlagsEXT types,
                                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                          void* user);

    // ---- panels.cpp ----
    void draw_ui();
    void draw_run_window();
    void draw_settings();
    void draw_images_window();
    void draw_image_panel(size_t texture, const char* caption, const std::string& detail, ImVec2 size, int index);
    void draw_plots_window();
    void draw_parameters_window();
    void draw_views_window();

    StudioConfig config_;
    std::ostream& out_;
    std::ostream& err_;
    GLFWwindow* window_ = nullptr;
    VkSurfaceKHR surface_ = VK_NULL_HANDLE;
    VkInstance instance_ = VK_NULL_HANDLE;
    // With validation on: the studio's own messenger, for the messages of the device's destruction (objects
    // left alive), which come after the engine's count is read.
    VkDebugUtilsMessengerEXT exit_messenger_ = VK_NULL_HANDLE;
    std::mutex exit_messages_mutex_;
    bool collect_exit_messages_ = false;
    std::vector<std::string> exit_messages_;
    VkSampler leaked_sampler_ = VK_NULL_HANDLE;   // ADJOINT_STUDIO_LEAK_AT_EXIT
    std::optional<Context> context_;
    std::optional<Device> device_;
    std::unique_ptr<Presenter> presenter_;
    std::unique_ptr<Textures> textures_;
    VkDescriptorPool imgui_pool_ = VK_NULL_HANDLE;
    bool imgui_ready_ = false;
    std::unique_ptr<Session> session_;
    std::unique_ptr<OrbitView> orbit_;

    // Panel textures of the session's views: target, current, diff, gradient per view; the orbit's.
    struct ViewTextures {
        std::array<size_t, 4> ids{};
        uint64_t version = UINT64_MAX;
    };
    std::vector<ViewTextures> view_textures_;
    size_t orbit_texture_ = 0;
    uint64_t orbit_version_ = UINT64_MAX;

    // UI state.
    bool running_ = false;
    int iterations_per_frame_ = 4;
    float frame_budget_ms_ = 40.0f;
    app::Scene edited_;                 // the settings being edited, applied by Reset
    std::string status_;                // the last message (a refused scene, ...)
    std::vector<std::filesystem::path> demos_;
    int demo_index_ = 0;
    std::array<char, 512> path_text_{};
    float zoom_ = 1.0f;                 // image panels: shared zoom and centre (texture coordinates)
    ImVec2 centre_{0.5f, 0.5f};
    int grid_show_ = 1;                 // views grid: 0 target, 1 current, 2 |diff|, 3 gradient
    bool orbit_follows_ = true;         // re-render the orbit view as the parameters change
    uint32_t orbit_iteration_ = UINT32_MAX;
    double last_grid_refresh_ms_ = -1e300;
    std::array<PanelRect, 4> panel_rects_{};
    float tiles_top_ = 300.0f;          // where the windows below the image panels start

    // Statistics for the closing summary.
    uint64_t frames_ = 0;
    double frame_ms_total_ = 0;
    uint32_t iterations_run_ = 0;
    double iteration_ms_total_ = 0;
    size_t validation_count_ = 0;
    int64_t resized_at_iteration_ = -1;   // ADJOINT_STUDIO_RESIZE: the iteration when the new size showed
    // Minimized: frames with the window at zero size (nothing drawn, the run goes on), the iterations run in
    // them; ADJOINT_STUDIO_MINIMIZE: the iteration when it minimized, and when the first frame after was drawn.
    bool script_minimized_ = false;
    bool views_due_ = false;              // panels to refresh once the window shows again
    uint32_t minimized_frames_ = 0;
    uint32_t minimized_iterations_ = 0;
    int64_t minimized_at_iteration_ = -1;
    int64_t restored_at_iteration_ = -1;
};

} // namespace adjoint::studio
