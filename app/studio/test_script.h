// The test hooks at work in the frame loop: the window closed, resized and minimized at scripted frames, and
// what the tests read back about it (--test-layout's JSON).
#pragma once
#include "options.h"
#include "panels.h"

#include <array>
#include <filesystem>

namespace adjoint::studio {

// What --test-layout writes besides the script's own measurements.
struct LayoutFacts {
    VkExtent2D window{};
    uint32_t image_width = 0, image_height = 0;
    uint32_t iterations = 0;
    uint64_t swapchains = 0;
    std::array<PanelRect, 4> panels{};
    EnvironmentFacts environment;
    TextureViewFacts textures;
    GradientViewFacts gradients;
    std::string status;   // the run window's last message
    std::string scene_picker;   // what the scene picker shows
    TableFacts table;           // the parameter table's cells
    std::vector<CurveFacts> curves;   // the loss window's curves
    FlickerFacts flicker;
    std::vector<std::string> orbit_lights;   // the lights drawn inside the orbit view
    size_t shadow_switches = 0;              // the shadow switches under it
};

class TestScript {
public:
    explicit TestScript(TestHooks hooks) : hooks_(std::move(hooks)) {}

    // At the start of frame `frame`: closes, resizes, minimizes or restores the window as scripted.
    void before_frame(uint32_t frame, Window& window, int64_t iteration);
    // A scripted resize holds the run until the new size shows (at most 300 frames), so that it lands in the
    // middle of the run.
    bool holds_run() const { return resize_requested_ && resized_at_iteration_ < 0 && frames_since_resize_ <= 300; }
    // Whether a scripted exit may come now: the resize has shown (the screenshot has the new size) and the
    // minimized window is back (the screenshot shows it restored).
    bool may_quit(uint32_t frame, VkExtent2D extent) const;
    // After the run's slice: notes the iteration at which the new size showed.
    void note_extent(VkExtent2D extent, int64_t iteration);
    // After drawing (or not, while minimized).
    void after_frame(bool minimized, bool drawn, uint32_t iterations_ran, int64_t iteration);
    void write_layout(const LayoutFacts& facts) const;   // when asked for

    bool leak_at_exit() const { return hooks_.leak_at_exit; }
    bool flicker() const { return hooks_.flicker; }
    const std::optional<std::string>& tab() const { return hooks_.tab; }
    // The environment file to pick at this frame, if any.
    const std::filesystem::path* environment_at(uint32_t frame) const {
        return hooks_.environment && hooks_.environment->frame == frame ? &hooks_.environment->file : nullptr;
    }

private:
    TestHooks hooks_;
    bool resize_requested_ = false;
    uint32_t frames_since_resize_ = 0;
    int64_t resized_at_iteration_ = -1;
    bool minimized_ = false;                 // by the script
    // Frames with the window at zero size (nothing drawn, the run goes on) and the iterations run in them;
    // the iteration when the script minimized it, and when the first frame after was drawn.
    uint32_t minimized_frames_ = 0;
    uint32_t minimized_iterations_ = 0;
    int64_t minimized_at_iteration_ = -1;
    int64_t restored_at_iteration_ = -1;
};

} // namespace adjoint::studio
