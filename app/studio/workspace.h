// The scene open in the studio: its Session, the settings being edited for the next Reset, the orbit view, the
// environment map's, the textures' and the gradient images' panels, and the panel textures that show them,
// brought up to date once per frame.
#pragma once
#include "environment.h"
#include "gradient_view.h"
#include "orbit.h"
#include "session.h"
#include "texture_view.h"
#include "textures.h"

#include <array>
#include <filesystem>
#include <memory>
#include <optional>

namespace adjoint::studio {

class Presenter;
class Window;

// What happened in this frame, for what the panels must catch up with.
struct FrameEvents {
    uint32_t frame = 0;
    uint32_t iterations_ran = 0;
    bool running = false;     // the run goes on after this frame
    bool quitting = false;    // the last frame
    bool minimized = false;   // nothing is shown: the panels catch up once the window is back
};

class Workspace {
public:
    Workspace(Device& device, Window& window, Presenter& presenter, Textures& textures);

    // Opens `scene` (`out` as --out), the current session's panels replaced. SceneError for what the session
    // refuses, the current one kept.
    void open(app::Scene scene, std::optional<std::filesystem::path> out);
    // The scene picker: the current session's --out outputs are finished first (they belong to the scene of
    // the command line). Error for a scene that cannot be loaded or opened.
    void load(const std::filesystem::path& file);
    // A scene made from the current one (another environment file): loaded as load() loads a file.
    void load(app::Scene scene);
    // Starts over from edited() (SceneError: unchanged).
    void reset();

    Session* session() { return session_.get(); }
    app::Scene& edited() { return edited_; }
    OrbitView& orbit() { return orbit_; }
    bool orbit_follows = true;   // re-render the orbit view as the parameters change
    bool diagnose = false;       // sessions opened from now on can draw gradient images (--diagnose)

    // Panel textures: target, current, |diff|, gradient of view `v`; the orbit view's.
    const std::array<Textures::Id, 4>& view_textures(uint32_t v) const { return view_textures_.at(v).ids; }
    Textures::Id orbit_texture() const { return orbit_texture_; }
    EnvironmentView& environment() { return environment_; }
    TextureView& texture_view() { return texture_view_; }
    GradientView& gradient_view() { return gradient_view_; }
    uint64_t opened() const { return opened_; }   // counts the sessions opened

    // Re-renders what the frame changed (the selected view every frame that ran, the grid of views at most
    // every 0.25 s, the orbit view) and queues the texture copies.
    void catch_up(const FrameEvents& e);

private:
    void make_textures();
    void update_textures();

    Device& device_;
    Window& window_;
    Presenter& presenter_;
    Textures& textures_;
    std::unique_ptr<Session> session_;
    app::Scene edited_;
    OrbitView orbit_;
    EnvironmentView environment_;
    TextureView texture_view_;
    GradientView gradient_view_;
    uint64_t opened_ = 0;
    uint32_t orbit_iteration_ = UINT32_MAX;   // the iteration the orbit view shows

    struct ViewTextures {
        std::array<Textures::Id, 4> ids{};
        uint64_t version = UINT64_MAX;
    };
    std::vector<ViewTextures> view_textures_;
    Textures::Id orbit_texture_ = 0;
    uint64_t orbit_version_ = UINT64_MAX;
    bool views_due_ = false;                  // panels to refresh once the window shows again
    double last_grid_refresh_ms_ = -1e300;
};

} // namespace adjoint::studio
