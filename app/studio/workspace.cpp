// The open scene and its panel textures: opening, loading, resetting, and the per-frame refresh.
#include "workspace.h"

#include "clock.h"
#include "presenter.h"
#include "window.h"

namespace adjoint::studio {

namespace {

constexpr uint32_t kOrbitSize = 256;

} // namespace

Workspace::Workspace(Device& device, Window& window, Presenter& presenter, Textures& textures)
    : device_(device), window_(window), presenter_(presenter), textures_(textures), orbit_(device, kOrbitSize),
      environment_(device, textures), texture_view_(device, textures), gradient_view_(device, textures) {}

void Workspace::open(app::Scene scene, std::optional<std::filesystem::path> out) {
    if (out && !scene.optimize)
        throw app::SceneError(scene.display_name, "optimize", "--out needs a scene with an optimize block");
    auto session = std::make_unique<Session>(device_, std::move(scene), std::move(out), diagnose);
    // The old session's buffers may still be read by frames in flight.
    presenter_.wait_idle();
    textures_.clear();
    view_textures_.clear();
    session_ = std::move(session);
    edited_ = session_->scene();
    orbit_.reset(session_->scene());
    orbit_iteration_ = UINT32_MAX;
    make_textures();
    environment_.open(*session_);
    texture_view_.open(*session_);
    gradient_view_.open(*session_);
    ++opened_;
    window_.set_title("Adjoint Studio - " + session_->scene().display_name);
}

void Workspace::load(const std::filesystem::path& file) { load(app::load_scene(file)); }

void Workspace::load(app::Scene scene) {
    if (session_) session_->finish_outputs();
    open(std::move(scene), std::nullopt);
}

void Workspace::reset() {
    session_->reset(edited_);
    orbit_iteration_ = UINT32_MAX;
}

void Workspace::make_textures() {
    orbit_texture_ = textures_.create(orbit_.size(), orbit_.size());
    orbit_version_ = UINT64_MAX;
    for (uint32_t v = 0; v < session_->view_count(); ++v) {
        ViewTextures t;
        for (auto& id : t.ids) id = textures_.create(session_->width(), session_->height());
        view_textures_.push_back(t);
    }
}

void Workspace::update_textures() {
    for (uint32_t v = 0; v < view_textures_.size(); ++v) {
        const ViewImages& im = session_->view(v);
        ViewTextures& t = view_textures_[v];
        if (t.version == im.version) continue;
        textures_.update(t.ids[0], im.target_px);
        textures_.update(t.ids[1], im.current_px);
        textures_.update(t.ids[2], im.diff_px);
        textures_.update(t.ids[3], im.gradient_px);
        t.version = im.version;
    }
    if (orbit_version_ != orbit_.version()) {
        textures_.update(orbit_texture_, orbit_.texels());
        orbit_version_ = orbit_.version();
    }
}

void Workspace::catch_up(const FrameEvents& e) {
    if (!session_) return;
    views_due_ = views_due_ || e.iterations_ran || e.quitting;
    if (views_due_ && !e.minimized) {
        views_due_ = false;
        std::vector<uint32_t> views{session_->selected_view};
        const bool grid_due = now_ms() - last_grid_refresh_ms_ > 250 || !e.running || e.quitting;
        if (session_->view_count() > 1 && grid_due) {
            views.clear();
            for (uint32_t v = 0; v < session_->view_count(); ++v) views.push_back(v);
            last_grid_refresh_ms_ = now_ms();
        }
        session_->refresh(views);
    }
    const bool orbit_due = orbit_.moved() || (orbit_follows && orbit_iteration_ != session_->iteration() &&
                                              (!e.running || e.quitting || e.frame % 8 == 0));
    if (!e.minimized && orbit_due) {
        orbit_.render(session_->current_scene());
        orbit_iteration_ = session_->iteration();
    }
    if (!e.minimized) {
        environment_.catch_up(*session_, e.running, e.quitting);
        texture_view_.catch_up(*session_, e.running, e.quitting);
        // Last: its pass leaves its own gradient where parameter_now reads the last step's.
        gradient_view_.catch_up(*session_, e.running, e.quitting);
    }
    update_textures();
}

} // namespace adjoint::studio
