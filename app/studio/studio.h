// adjoint-studio: the window (GLFW), the engine's device shared with the swapchain, Dear ImGui, and the
// panels over the open scene. Studio owns them and runs the frame loop; the command line, test hooks
// included, is options.h's.
#pragma once
#include "gpu.h"
#include "imgui_layer.h"
#include "options.h"
#include "panels.h"
#include "presenter.h"
#include "test_script.h"
#include "window.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

namespace adjoint::studio {

// The whole program after argument parsing and scene loading; returns the exit code. Assumes a display.
int run_studio(StudioConfig config, std::ostream& out, std::ostream& err);

class Studio {
public:
    Studio(StudioConfig config, std::ostream& out, std::ostream& err);
    ~Studio();   // shuts down, if run() did not get to it
    Studio(const Studio&) = delete;
    Studio& operator=(const Studio&) = delete;
    int run();

private:
    // Everything the window shows, on the engine's device: made in this order, destroyed in reverse once the
    // queue is idle, all before the device closes (so that the validation count at the end covers it).
    struct Screen {
        Screen(Window& window, Gpu& gpu, RunState& run, const FrameStats& stats,
               std::vector<std::filesystem::path> demos, std::vector<std::filesystem::path> environments);
        ~Screen() { presenter.wait_idle(); }
        Presenter presenter;
        Textures textures;
        ImGuiLayer imgui;
        Workspace workspace;
        ImagePanels images;
        RunPanels controls;
    };

    void start();
    bool step(uint32_t frame);                 // one frame of the loop; false after the last
    uint32_t advance();                        // the optimization's slice of this frame
    bool should_quit(uint32_t frame) const;
    bool draw(bool capture, VkExtent2D size);  // false when nothing could be drawn (minimized)
    int finish();
    bool save_screenshot();
    int shut_down(int code);                   // destroys everything; counts the validation messages
    int64_t iteration() const;

    StudioConfig config_;
    std::ostream& out_;
    std::ostream& err_;
    TestScript script_;
    RunState run_;
    FrameStats stats_;
    std::optional<Screenshot> shot_;
    size_t validation_count_ = 0;
    // Destroyed in reverse: what the window shows, the device, the window.
    std::unique_ptr<Window> window_;
    std::unique_ptr<Gpu> gpu_;
    std::unique_ptr<Screen> screen_;
};

} // namespace adjoint::studio
