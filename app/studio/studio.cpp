// The studio's set-up, frame loop and orderly shut-down: the session driven a slice per frame, the panels
// brought up to date, the screenshot, and the validation messages counted once everything is gone.
#include "studio.h"

#include "clock.h"

#include <GLFW/glfw3.h>
#include <stb_image_write.h>

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/interrupt.h>

#include <algorithm>

namespace adjoint::studio {

namespace fs = std::filesystem;

namespace {

// The demos offered by the scene picker.
std::vector<fs::path> find_demos(const fs::path& dir) {
    std::vector<fs::path> demos;
    if (fs::is_directory(dir))
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().extension() == ".json") demos.push_back(entry.path());
    std::sort(demos.begin(), demos.end());
    return demos;
}

} // namespace

Studio::Screen::Screen(Window& window, Gpu& gpu, RunState& run, const FrameStats& stats, std::vector<fs::path> demos,
                       std::vector<fs::path> environments)
    : presenter(gpu.device(), gpu.surface(), window.drawable_size()), textures(gpu.device(), presenter.render_pass()),
      imgui(window.get(), gpu.device(), presenter), workspace(gpu.device(), window, presenter, textures),
      images(workspace, textures), controls(workspace, run, stats, std::move(demos), std::move(environments)) {}

Studio::Studio(StudioConfig config, std::ostream& out, std::ostream& err)
    : config_(std::move(config)), out_(out), err_(err), script_(config_.hooks) {}

Studio::~Studio() { shut_down(0); }

void Studio::start() {
    window_ = std::make_unique<Window>(config_.size, "Adjoint Studio");
    gpu_ = std::make_unique<Gpu>(window_->get());
    if (script_.leak_at_exit()) gpu_->leak_a_sampler();
    // The environments offered: the project's, and the HDRIs of Debian's blender-data where installed.
    const std::vector<fs::path> environments = environment_files(
        {config_.scenes_dir.parent_path() / "environments", "/usr/share/blender/datafiles/studiolights/world"});
    screen_ = std::make_unique<Screen>(*window_, *gpu_, run_, stats_, find_demos(config_.scenes_dir), environments);
    screen_->workspace.diagnose = config_.options.diagnose;
    if (config_.scene) screen_->workspace.open(std::move(*config_.scene), config_.options.out);
    screen_->images.set_flicker(script_.flicker());
    if (script_.tab()) screen_->controls.select_tab(*script_.tab());
    const Session* session = screen_->workspace.session();
    run_.running = config_.options.run && session && session->optimizable();
}

int64_t Studio::iteration() const {
    const Session* session = screen_->workspace.session();
    return session ? int64_t(session->iteration()) : 0;
}

int Studio::run() {
    start();
    // Ctrl-C or SIGTERM (main's InterruptGuard) close the window as its close button does (outputs saved), then
    // exit with 130.
    for (uint32_t frame = 0; step(frame); ++frame) {
    }
    return finish();
}

bool Studio::step(uint32_t frame) {
    if (run_.running)
        glfwPollEvents();
    else
        glfwWaitEventsTimeout(0.05);   // idle: wake for input, or now and then
    const double t0 = now_ms();        // a frame's own time, not the idle wait
    script_.before_frame(frame, *window_, iteration());
    if (const fs::path* map = script_.environment_at(frame)) {
        // As the control picks it; a scripted run (--run) then goes on with the reloaded scene.
        const bool picked = screen_->controls.pick_environment(*map);
        const Session* session = screen_->workspace.session();
        if (picked) run_.running = config_.options.run && session && session->optimizable();
    }
    const uint32_t ran = advance();
    const bool quit = should_quit(frame);
    Presenter& presenter = screen_->presenter;
    script_.note_extent(presenter.extent(), iteration());
    // While minimized the run goes on but nothing is shown: the panels catch up when the window is back.
    const VkExtent2D size = window_->drawable_size();
    const bool minimized = size.width == 0 || size.height == 0;
    screen_->workspace.catch_up({frame, ran, run_.running, quit, minimized});
    const bool capture = quit && config_.options.screenshot.has_value();
    // The last frame (the screenshot's, the layout's) shows the values the run ended at, not those of the last
    // read a quarter second before.
    if (Session* session = screen_->workspace.session(); quit && session) session->read_parameters_next();
    const bool drawn = draw(capture, size);
    stats_.frames += drawn;
    stats_.frame_ms_total += drawn ? now_ms() - t0 : 0;
    script_.after_frame(minimized, drawn, ran, iteration());
    if (capture && drawn) shot_ = presenter.take_screenshot();
    return !quit;
}

uint32_t Studio::advance() {
    Session* session = screen_->workspace.session();
    if (!session || !run_.running || script_.holds_run()) return 0;
    uint32_t budget = uint32_t(run_.iterations_per_frame);
    if (const auto& quit_after = config_.options.quit_after_iters)
        budget = uint32_t(std::min<int64_t>(budget, std::max<int64_t>(*quit_after - session->iteration(), 0)));
    const double s0 = now_ms();
    const uint32_t ran = budget ? session->advance(budget, run_.frame_budget_ms) : 0;
    if (ran) {
        stats_.iterations += ran;
        stats_.iteration_ms_total += now_ms() - s0;
    }
    if (session->finished() || !session->error().empty()) run_.running = false;
    return ran;
}

// The window was closed (or Ctrl-C), or --quit-after-iters is reached and the test script's events are over.
bool Studio::should_quit(uint32_t frame) const {
    if (window_->close_requested() || app::interrupt_requested()) return true;
    const auto& quit_after = config_.options.quit_after_iters;
    if (!quit_after) return false;
    const Session* s = screen_->workspace.session();
    const bool done =
        !s || !s->optimizable() || s->iteration() >= *quit_after || s->finished() || !s->error().empty();
    return done && script_.may_quit(frame, screen_->presenter.extent());
}

bool Studio::draw(bool capture, VkExtent2D size) {
    Screen& s = *screen_;
    s.imgui.new_frame(config_.options.quit_after_iters.has_value());
    s.textures.new_ui_frame();
    const float top = s.images.draw_images();
    s.controls.draw(top);
    s.images.draw_views(top);
    ImGui::Render();
    VkCommandBuffer cmd = s.presenter.begin_frame(size);
    if (!cmd) return false;   // minimized: ImGui's frame is simply dropped
    s.textures.record_updates(cmd);
    const float clear[4] = {0.06f, 0.06f, 0.07f, 1.0f};
    s.presenter.begin_render_pass(cmd, clear);
    s.textures.render(ImGui::GetDrawData(), cmd);
    s.presenter.end_frame(capture);
    return true;
}

bool Studio::save_screenshot() {
    if (!shot_) {
        err_ << "adjoint: error: --screenshot: the window had no area to draw at exit\n";
        return false;
    }
    std::string png;
    auto sink = [](void* ctx, void* data, int size) {
        static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size_t(size));
    };
    stbi_write_png_to_func(sink, &png, int(shot_->width), int(shot_->height), 3, shot_->rgb.data(),
                           int(shot_->width) * 3);
    app::write_file_atomic(*config_.options.screenshot, png);
    return true;
}

int Studio::finish() {
    int code = app::interrupt_requested() ? app::exit_interrupted : app::exit_ok;
    Session* session = screen_->workspace.session();
    if (session && !session->error().empty()) {
        err_ << "adjoint: error: " << session->error() << "\n";
        code = app::exit_failure;
    }
    if (session) session->finish_outputs();
    if (config_.options.screenshot && !save_screenshot()) code = app::exit_failure;
    const Presenter& presenter = screen_->presenter;
    script_.write_layout({presenter.extent(), session ? session->width() : 0, session ? session->height() : 0,
                          uint32_t(iteration()), presenter.swapchains_created(), screen_->images.panel_rects(),
                          screen_->workspace.environment().facts(), screen_->workspace.texture_view().facts(),
                          screen_->workspace.gradient_view().facts(), screen_->controls.status(),
                          screen_->controls.picker_text(), screen_->controls.table(), screen_->controls.curves(),
                          screen_->images.flicker(), screen_->images.orbit_lights(),
                          screen_->images.shadow_switches()});
    const double it_per_s = stats_.iteration_ms_total > 0 ? 1000.0 * stats_.iterations / stats_.iteration_ms_total : 0;
    out_ << "adjoint-studio: " << stats_.frames << " frames, mean frame " << stats_.mean_frame_ms() << " ms; "
         << stats_.iterations << " iterations at " << it_per_s << " it/s (iteration time only)";
    if (session) out_ << "; image " << session->width() << "x" << session->height();
    out_ << "\n";
    code = shut_down(code);
    out_ << "adjoint-studio: validation " << (validation_requested() ? "on, " : "off, ") << validation_count_
         << " messages\n";
    return code;
}

// The window's objects go first, then the device, whose destruction the validation layer also reports on.
int Studio::shut_down(int code) {
    screen_.reset();
    if (gpu_) {
        const std::vector<std::string> messages = gpu_->close();
        validation_count_ += messages.size();
        if (!messages.empty()) {
            err_ << "adjoint: error: " << messages.size() << " Vulkan validation message(s):\n";
            for (size_t i = 0; i < std::min<size_t>(messages.size(), 10); ++i) err_ << "  " << messages[i] << "\n";
            code = app::exit_failure;
        }
    }
    gpu_.reset();
    window_.reset();
    return code;
}

int run_studio(StudioConfig config, std::ostream& out, std::ostream& err) {
    try {
        Studio studio(std::move(config), out, err);
        return studio.run();
    } catch (const app::SceneError& e) {
        err << "adjoint: error: " << e.what() << "\n";
        return app::exit_bad_input;
    } catch (const Error& e) {
        err << "adjoint: error: " << e.what() << "\n";
        return app::exit_failure;
    }
}

} // namespace adjoint::studio
