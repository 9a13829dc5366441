// The studio's set-up and frame loop: window and surface, the engine's device created to present, ImGui, the
// session driven a slice per frame, screenshots and the orderly shut-down (validation counted at the end).
#include "studio.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#include <stb_image_write.h>

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/interrupt.h>

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

namespace fs = std::filesystem;

namespace {

// As the engine reads ADJOINT_VALIDATION.
bool validation_requested() {
    const char* v = std::getenv("ADJOINT_VALIDATION");
    return v && *v && std::string_view(v) != "0";
}

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool parse_number(std::string_view text, uint32_t& value) {
    auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

void imgui_check(VkResult r) {
    if (r != VK_SUCCESS) fail("Dear ImGui's Vulkan backend: VkResult ", int(r));
}

constexpr uint32_t kOrbitSize = 256;

} // namespace

WindowSize parse_window_size(const std::string& text, const std::string& what) {
    auto x = text.find('x');
    WindowSize s;
    if (x == std::string::npos || !parse_number(std::string_view(text).substr(0, x), s.width) ||
        !parse_number(std::string_view(text).substr(x + 1), s.height) || s.width == 0 || s.height == 0 ||
        s.width > 16384 || s.height > 16384)
        fail(what, ": expected WxH (e.g. 1280x800), got '", text, "'");
    return s;
}

ScriptedResize parse_scripted_resize(const std::string& text, const std::string& what) {
    auto at = text.find('@');
    ScriptedResize r;
    if (at == std::string::npos || !parse_number(std::string_view(text).substr(at + 1), r.frame))
        fail(what, ": expected WxH@FRAME (e.g. 900x600@5), got '", text, "'");
    r.size = parse_window_size(text.substr(0, at), what);
    return r;
}

ScriptedMinimize parse_scripted_minimize(const std::string& text, const std::string& what) {
    auto at = text.find('@');
    ScriptedMinimize m;
    if (at == std::string::npos || !parse_number(std::string_view(text).substr(0, at), m.frames) || m.frames == 0 ||
        !parse_number(std::string_view(text).substr(at + 1), m.frame))
        fail(what, ": expected FRAMES@FRAME with FRAMES >= 1 (e.g. 3@2: minimized for 3 frames from frame 2), got '",
             text, "'");
    return m;
}

uint32_t parse_frame(const std::string& text, const std::string& what) {
    uint32_t frame = 0;
    if (!parse_number(text, frame)) fail(what, ": expected a frame number, got '", text, "'");
    return frame;
}

Studio::Studio(StudioConfig config, std::ostream& out, std::ostream& err)
    : config_(std::move(config)), out_(out), err_(err) {}

Studio::~Studio() { shut_down(0); }

VkBool32 Studio::on_exit_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                 const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* self = static_cast<Studio*>(user);
    std::lock_guard lock(self->exit_messages_mutex_);
    // Until shut_down the engine's messenger counts the same messages.
    if (self->collect_exit_messages_)
        self->exit_messages_.push_back(
            std::string(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ") +
            (data->pMessage ? data->pMessage : ""));
    return VK_FALSE;
}

void Studio::create_window() {
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    window_ = glfwCreateWindow(int(config_.size.width), int(config_.size.height), "Adjoint Studio", nullptr, nullptr);
    if (!window_) fail("glfwCreateWindow failed");
}

void Studio::create_device() {
    interop::DeviceRequirements r;
    uint32_t n = 0;
    const char** names = glfwGetRequiredInstanceExtensions(&n);
    if (!names) fail("GLFW found no Vulkan window-system support (glfwGetRequiredInstanceExtensions)");
    r.instance_extensions.assign(names, names + n);
    r.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
    r.on_instance = [this](VkInstance instance) {
        instance_ = instance;
        VkResult res = glfwCreateWindowSurface(instance, window_, nullptr, &surface_);
        if (res != VK_SUCCESS) fail("glfwCreateWindowSurface failed with VkResult ", int(res));
        // The engine's messages are read in shut_down before the device is destroyed; this messenger also sees
        // the destruction, where the layer reports the objects left alive.
        if (validation_requested()) {
            auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
                vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
            if (!create) fail("validation is on, but vkCreateDebugUtilsMessengerEXT is missing");
            VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
            info.messageSeverity =
                VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
            info.messageType =
                VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
            info.pfnUserCallback = &Studio::on_exit_message;
            info.pUserData = this;
            STUDIO_VK(create(instance, &info, nullptr, &exit_messenger_));
        }
    };
    // The engine's one queue must draw and present to this window.
    r.accept_queue_family = [this](VkInstance, VkPhysicalDevice pd, uint32_t family) {
        uint32_t count = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
        std::vector<VkQueueFamilyProperties> props(count);
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, props.data());
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(pd, family, surface_, &present);
        return (props[family].queueFlags & VK_QUEUE_GRAPHICS_BIT) && present;
    };
    // The surface is here only on a failed creation: otherwise shut_down has destroyed it.
    r.on_instance_destroy = [this](VkInstance instance) {
        if (surface_) vkDestroySurfaceKHR(instance, surface_, nullptr);
        surface_ = VK_NULL_HANDLE;
        if (exit_messenger_) {
            auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
                vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
            if (destroy) destroy(instance, exit_messenger_, nullptr);
            exit_messenger_ = VK_NULL_HANDLE;
        }
    };
    context_.emplace();
    device_.emplace(interop::create_device(*context_, r));
    presenter_ = std::make_unique<Presenter>(window_, *device_, surface_);
    textures_ = std::make_unique<Textures>(*device_, presenter_->render_pass());
    orbit_ = std::make_unique<OrbitView>(*device_, kOrbitSize);
    if (config_.leak_at_exit) {
        VkSamplerCreateInfo info{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
        STUDIO_VK(vkCreateSampler(interop::handles(*device_).device, &info, nullptr, &leaked_sampler_));
    }
}

void Studio::init_imgui() {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;   // the same layout every start (tests read panels at known places)
    ImGui::StyleColorsDark();
    ImGui::GetStyle().WindowRounding = 0.0f;
    ImGui_ImplGlfw_InitForVulkan(window_, true);

    const interop::DeviceHandles h = interop::handles(*device_);
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    pool.maxSets = 4;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    STUDIO_VK(vkCreateDescriptorPool(h.device, &pool, nullptr, &imgui_pool_));

    ImGui_ImplVulkan_InitInfo info{};
    info.Instance = h.instance;
    info.PhysicalDevice = h.physical_device;
    info.Device = h.device;
    info.QueueFamily = h.queue_family;
    info.Queue = h.queue;
    info.DescriptorPool = imgui_pool_;
    info.Subpass = 0;
    info.MinImageCount = presenter_->min_image_count();
    // The backend cycles its vertex buffers over ImageCount frames; the presenter has at most 2 in flight.
    info.ImageCount = std::max(presenter_->image_count(), std::max(presenter_->min_image_count(), 3u));
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    info.CheckVkResultFn = imgui_check;
    ImGui_ImplVulkan_Init(&info, presenter_->render_pass());
    imgui_ready_ = true;

    // The font atlas goes up once, through the engine's queue.
    VkCommandPool cmd_pool;
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = h.queue_family;
    STUDIO_VK(vkCreateCommandPool(h.device, &pool_info, nullptr, &cmd_pool));
    VkCommandBuffer cmd;
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = cmd_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    STUDIO_VK(vkAllocateCommandBuffers(h.device, &alloc, &cmd));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    STUDIO_VK(vkBeginCommandBuffer(cmd, &begin));
    ImGui_ImplVulkan_CreateFontsTexture(cmd);
    STUDIO_VK(vkEndCommandBuffer(cmd));
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    interop::with_queue(*device_, [&](VkQueue q) {
        STUDIO_VK(vkQueueSubmit(q, 1, &submit, VK_NULL_HANDLE));
        STUDIO_VK(vkQueueWaitIdle(q));
    });
    vkDestroyCommandPool(h.device, cmd_pool, nullptr);
    ImGui_ImplVulkan_DestroyFontUploadObjects();
}

void Studio::open_session(app::Scene scene, std::optional<fs::path> out) {
    if (out && !scene.optimize)
        throw app::SceneError(scene.display_name, "optimize", "--out needs a scene with an optimize block");
    auto session = std::make_unique<Session>(*device_, std::move(scene), std::move(out));
    // The old session's buffers may still be read by frames in flight.
    presenter_->wait_idle();
    textures_->clear();
    view_textures_.clear();
    session_ = std::move(session);
    edited_ = session_->scene();
    orbit_->reset(session_->scene());
    orbit_iteration_ = UINT32_MAX;
    make_textures();
    glfwSetWindowTitle(window_, ("Adjoint Studio - " + session_->scene().display_name).c_str());
    std::error_code ec;   // a scene from elsewhere is simply not a demo
    for (size_t i = 0; i < demos_.size(); ++i)
        if (fs::equivalent(demos_[i], session_->scene().source_file, ec)) demo_index_ = int(i);
}

void Studio::load(const fs::path& file) {
    try {
        app::Scene scene = app::load_scene(file);
        // --out belongs to the scene of the command line: its run's outputs are finished before leaving it.
        if (session_) session_->finish_outputs();
        open_session(std::move(scene), std::nullopt);
        running_ = false;
        status_ = "loaded " + file.string();
    } catch (const Error& e) {
        status_ = e.what();
    }
}

void Studio::make_textures() {
    orbit_texture_ = textures_->create(orbit_->size(), orbit_->size());
    orbit_version_ = UINT64_MAX;
    for (uint32_t v = 0; v < session_->view_count(); ++v) {
        ViewTextures t;
        for (auto& id : t.ids) id = textures_->create(session_->width(), session_->height());
        view_textures_.push_back(t);
    }
}

void Studio::update_textures() {
    for (uint32_t v = 0; v < view_textures_.size(); ++v) {
        const ViewImages& im = session_->view(v);
        ViewTextures& t = view_textures_[v];
        if (t.version == im.version) continue;
        textures_->update(t.ids[0], im.target_px);
        textures_->update(t.ids[1], im.current_px);
        textures_->update(t.ids[2], im.diff_px);
        textures_->update(t.ids[3], im.gradient_px);
        t.version = im.version;
    }
    if (orbit_version_ != orbit_->version()) {
        textures_->update(orbit_texture_, orbit_->texels());
        orbit_version_ = orbit_->version();
    }
}

VkExtent2D Studio::drawable_size() const {
    if (script_minimized_ || glfwGetWindowAttrib(window_, GLFW_ICONIFIED)) return {0, 0};
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    return {uint32_t(std::max(w, 0)), uint32_t(std::max(h, 0))};
}

bool Studio::frame(bool capture, VkExtent2D size) {
    ImGui_ImplVulkan_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // A scripted run (--quit-after-iters) ignores the pointer, so that where Xvfb leaves it shows in no
    // screenshot (hover tooltips).
    if (config_.options.quit_after_iters) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
    textures_->new_ui_frame();
    draw_ui();
    ImGui::Render();
    VkCommandBuffer cmd = presenter_->begin_frame(size);
    if (!cmd) return false;   // minimized: ImGui's frame is simply dropped
    textures_->record_updates(cmd);
    const float clear[4] = {0.06f, 0.06f, 0.07f, 1.0f};
    presenter_->begin_render_pass(cmd, clear);
    textures_->render(ImGui::GetDrawData(), cmd);
    presenter_->end_frame(capture);
    return true;
}

void Studio::write_layout(const fs::path& file) const {
    std::ostringstream j;
    const VkExtent2D e = presenter_->extent();
    j << "{\n  \"window\": [" << e.width << ", " << e.height << "],\n";
    j << "  \"image\": [" << (session_ ? session_->width() : 0) << ", " << (session_ ? session_->height() : 0) << "],\n";
    j << "  \"iterations\": " << (session_ ? session_->iteration() : 0) << ",\n";
    j << "  \"swapchains\": " << presenter_->swapchains_created() << ",\n";
    j << "  \"resized_at_iteration\": " << resized_at_iteration_ << ",\n";
    j << "  \"minimized\": {\"frames\": " << minimized_frames_ << ", \"iterations\": " << minimized_iterations_
      << ", \"at_iteration\": " << minimized_at_iteration_ << ", \"restored_at_iteration\": " << restored_at_iteration_
      << "},\n  \"panels\": {";
    const char* names[4] = {"target", "current", "diff", "gradient"};
    for (int i = 0; i < 4; ++i) {
        const PanelRect& r = panel_rects_[size_t(i)];
        j << (i ? ",\n" : "\n") << "    \"" << names[i] << "\": [" << r.x0 << ", " << r.y0 << ", " << r.x1 << ", " << r.y1
          << "]";
    }
    j << "\n  }\n}\n";
    app::write_file_atomic(file, j.str());
}

int Studio::run() {
    create_window();
    create_device();
    init_imgui();
    if (fs::is_directory(config_.scenes_dir))
        for (const auto& entry : fs::directory_iterator(config_.scenes_dir))
            if (entry.path().extension() == ".json") demos_.push_back(entry.path());
    std::sort(demos_.begin(), demos_.end());
    if (config_.scene) open_session(std::move(*config_.scene), config_.options.out);
    running_ = config_.options.run && session_ && session_->optimizable();

    const auto& quit_after = config_.options.quit_after_iters;
    uint32_t frame_index = 0;
    bool resize_requested = false;
    uint32_t frames_since_resize = 0;
    bool captured = false;
    Screenshot shot;
    // Ctrl-C or SIGTERM close the window as its close button does (outputs saved), then exit with 130.
    app::InterruptGuard interrupts;
    for (;;) {
        if (running_) glfwPollEvents();
        else glfwWaitEventsTimeout(0.05);   // idle: wake for input, or now and then
        const double t0 = now_ms();          // a frame's own time, not the idle wait
        if (config_.close_at && frame_index == *config_.close_at) glfwSetWindowShouldClose(window_, GLFW_TRUE);

        if (config_.resize && frame_index == config_.resize->frame) {
            glfwSetWindowSize(window_, int(config_.resize->size.width), int(config_.resize->size.height));
            resize_requested = true;
        }
        if (resize_requested) ++frames_since_resize;
        if (config_.minimize && frame_index == config_.minimize->frame) {
            // A window manager iconifies the window; Xvfb has none and leaves it as it is, so the studio is held
            // at the zero size of a minimized window for the scripted frames (drawable_size) either way.
            glfwIconifyWindow(window_);
            script_minimized_ = true;
            minimized_at_iteration_ = session_ ? int64_t(session_->iteration()) : 0;
        }
        if (script_minimized_ && frame_index == config_.minimize->frame + config_.minimize->frames) {
            glfwRestoreWindow(window_);
            script_minimized_ = false;
        }

        // The optimization: a slice of this frame.
        uint32_t ran = 0;
        // A scripted resize holds the run until the new size shows, so that it lands in the middle of the run.
        const bool resize_pending = resize_requested && resized_at_iteration_ < 0 && frames_since_resize <= 300;
        if (session_ && running_ && !resize_pending) {
            uint32_t budget = uint32_t(iterations_per_frame_);
            if (quit_after) budget = uint32_t(std::min<int64_t>(budget, std::max<int64_t>(*quit_after - session_->iteration(), 0)));
            const double s0 = now_ms();
            ran = budget ? session_->advance(budget, frame_budget_ms_) : 0;
            if (ran) {
                iterations_run_ += ran;
                iteration_ms_total_ += now_ms() - s0;
            }
            if (session_->finished() || !session_->error().empty()) running_ = false;
        }
        // Leaving: the window was closed, or --quit-after-iters is reached (after a scripted resize has
        // taken effect, so that the screenshot shows the new size).
        bool quit = glfwWindowShouldClose(window_) || app::interrupt_requested();
        if (quit_after && (!session_ || !session_->optimizable() || session_->iteration() >= *quit_after ||
                           session_->finished() || !session_->error().empty())) {
            const VkExtent2D e = presenter_->extent();
            const bool settled = !config_.resize ||
                                 (resize_requested && e.width == config_.resize->size.width &&
                                  e.height == config_.resize->size.height) ||
                                 frames_since_resize > 300;
            // A scripted minimize ends with the window drawn again (the screenshot shows it restored).
            const bool restored =
                !config_.minimize || frame_index >= config_.minimize->frame + config_.minimize->frames;
            if ((settled && restored) || (config_.resize && frame_index > config_.resize->frame + 600)) quit = true;
        }
        if (resize_requested && resized_at_iteration_ < 0 && config_.resize &&
            presenter_->extent().width == config_.resize->size.width &&
            presenter_->extent().height == config_.resize->size.height)
            resized_at_iteration_ = session_ ? int64_t(session_->iteration()) : 0;
        // While minimized the run goes on but nothing is shown: the panels and the orbit view catch up when the
        // window is back.
        const VkExtent2D size = drawable_size();
        const bool minimized = size.width == 0 || size.height == 0;
        views_due_ = views_due_ || ran || quit;
        if (session_ && views_due_ && !minimized) {
            views_due_ = false;
            // The selected view every frame that ran; the grid at most every 0.25 s, and when the run stops.
            std::vector<uint32_t> views{session_->selected_view};
            const bool grid_due = now_ms() - last_grid_refresh_ms_ > 250 || !running_ || quit;
            if (session_->view_count() > 1 && grid_due) {
                views.clear();
                for (uint32_t v = 0; v < session_->view_count(); ++v) views.push_back(v);
                last_grid_refresh_ms_ = now_ms();
            }
            session_->refresh(views);
        }
        if (session_ && !minimized &&
            (orbit_->moved() || (orbit_follows_ && orbit_iteration_ != session_->iteration() &&
                                 (!running_ || quit || frame_index % 8 == 0)))) {
            orbit_->render(session_->current_scene());
            orbit_iteration_ = session_->iteration();
        }
        if (session_) update_textures();

        const bool capture = quit && config_.options.screenshot.has_value();
        const bool drawn = frame(capture, size);
        frames_ += drawn;
        if (minimized) {
            ++minimized_frames_;
            minimized_iterations_ += ran;
        } else if (drawn && minimized_at_iteration_ >= 0 && restored_at_iteration_ < 0) {
            restored_at_iteration_ = session_ ? int64_t(session_->iteration()) : 0;
        }
        frame_ms_total_ += drawn ? now_ms() - t0 : 0;
        ++frame_index;
        if (capture && drawn) {
            shot = presenter_->take_screenshot();
            captured = true;
        }
        if (quit) break;
    }

    int code = app::interrupt_requested() ? app::exit_interrupted : app::exit_ok;
    if (session_ && !session_->error().empty()) {
        err_ << "adjoint-studio: error: " << session_->error() << "\n";
        code = app::exit_failure;
    }
    if (session_) session_->finish_outputs();
    if (config_.options.screenshot) {
        if (!captured) {
            err_ << "adjoint-studio: error: --screenshot: the window had no area to draw at exit\n";
            code = app::exit_failure;
        } else {
            std::string png;
            auto sink = [](void* ctx, void* data, int size) {
                static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size_t(size));
            };
            stbi_write_png_to_func(sink, &png, int(shot.width), int(shot.height), 3, shot.rgb.data(),
                                   int(shot.width) * 3);
            app::write_file_atomic(*config_.options.screenshot, png);
        }
    }
    if (config_.layout_file) write_layout(*config_.layout_file);
    const double mean_frame = frames_ ? frame_ms_total_ / double(frames_) : 0;
    const double it_per_s = iteration_ms_total_ > 0 ? 1000.0 * iterations_run_ / iteration_ms_total_ : 0;
    out_ << "adjoint-studio: " << frames_ << " frames, mean frame " << mean_frame << " ms; " << iterations_run_
         << " iterations at " << it_per_s << " it/s (iteration time only)";
    if (session_) out_ << "; image " << session_->width() << "x" << session_->height();
    out_ << "\n";
    code = shut_down(code);
    out_ << "adjoint-studio: validation " << (validation_requested() ? "on, " : "off, ") << validation_count_
         << " messages\n";
    return code;
}

// Frees the window's objects first and counts validation messages while the device is still there.
int Studio::shut_down(int code) {
    if (!window_) return code;
    if (presenter_) presenter_->wait_idle();
    if (imgui_ready_) {
        ImGui_ImplVulkan_Shutdown();
        ImGui_ImplGlfw_Shutdown();
        ImGui::DestroyContext();
        imgui_ready_ = false;
    }
    if (imgui_pool_) vkDestroyDescriptorPool(interop::handles(*device_).device, imgui_pool_, nullptr);
    imgui_pool_ = VK_NULL_HANDLE;
    textures_.reset();
    presenter_.reset();
    if (surface_) vkDestroySurfaceKHR(instance_, surface_, nullptr);
    surface_ = VK_NULL_HANDLE;
    orbit_.reset();
    session_.reset();
    // The engine's messages up to here, then the studio's messenger's from the device's destruction, where the
    // layer reports what was left alive (the messenger goes in on_instance_destroy, after the device).
    std::vector<std::string> messages;
    if (device_) {
        std::lock_guard lock(exit_messages_mutex_);
        messages = device_->validation_messages();
        collect_exit_messages_ = true;
    }
    device_.reset();
    context_.reset();
    {
        std::lock_guard lock(exit_messages_mutex_);
        messages.insert(messages.end(), exit_messages_.begin(), exit_messages_.end());
        exit_messages_.clear();
        collect_exit_messages_ = false;
    }
    validation_count_ += messages.size();
    if (!messages.empty()) {
        err_ << "adjoint-studio: error: " << messages.size() << " Vulkan validation message(s):\n";
        for (size_t i = 0; i < std::min<size_t>(messages.size(), 10); ++i) err_ << "  " << messages[i] << "\n";
        code = app::exit_failure;
    }
    glfwDestroyWindow(window_);
    window_ = nullptr;
    return code;
}

int run_studio(StudioConfig config, std::ostream& out, std::ostream& err) {
    try {
        Studio studio(std::move(config), out, err);
        return studio.run();
    } catch (const app::SceneError& e) {
        err << "adjoint-studio: error: " << e.what() << "\n";
        return app::exit_bad_input;
    } catch (const Error& e) {
        err << "adjoint-studio: error: " << e.what() << "\n";
        return app::exit_failure;
    }
}

} // namespace adjoint::studio
