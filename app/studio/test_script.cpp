// The scripted window events of test runs and the layout file the tests read the screenshot by.
#include "test_script.h"

#include <adjoint/app/atomic_file.h>

#include <cstdio>
#include <sstream>

namespace adjoint::studio {

namespace {

// A JSON string: quotes, backslashes and control characters escaped (paths and messages).
std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

} // namespace

void TestScript::before_frame(uint32_t frame, Window& window, int64_t iteration) {
    if (hooks_.close_at && frame == *hooks_.close_at) window.request_close();
    if (hooks_.resize && frame == hooks_.resize->frame) {
        window.resize(hooks_.resize->size);
        resize_requested_ = true;
    }
    if (resize_requested_) ++frames_since_resize_;
    if (hooks_.minimize && frame == hooks_.minimize->frame) {
        window.minimize();
        minimized_ = true;
        minimized_at_iteration_ = iteration;
    }
    if (minimized_ && frame == hooks_.minimize->frame + hooks_.minimize->frames) {
        window.restore();
        minimized_ = false;
    }
}

bool TestScript::may_quit(uint32_t frame, VkExtent2D extent) const {
    const auto& r = hooks_.resize;
    const bool shown = resize_requested_ && extent.width == r->size.width && extent.height == r->size.height;
    const bool settled = !r || shown || frames_since_resize_ > 300;
    const auto& m = hooks_.minimize;
    const bool restored = !m || frame >= m->frame + m->frames;
    // A tab selected at the start (--test-tab) is drawn from frame 1, and a view computes for a tab drawn the
    // frame before (GradientView::catch_up): a run whose iterations all fit in frame 0 waits for frame 2.
    const bool tab_seen = !hooks_.tab || frame >= 2;
    return (settled && restored && tab_seen) || (r && frame > r->frame + 600);
}

void TestScript::note_extent(VkExtent2D extent, int64_t iteration) {
    const auto& r = hooks_.resize;
    if (resize_requested_ && resized_at_iteration_ < 0 && r && extent.width == r->size.width &&
        extent.height == r->size.height)
        resized_at_iteration_ = iteration;
}

void TestScript::after_frame(bool minimized, bool drawn, uint32_t iterations_ran, int64_t iteration) {
    if (minimized) {
        ++minimized_frames_;
        minimized_iterations_ += iterations_ran;
    } else if (drawn && minimized_at_iteration_ >= 0 && restored_at_iteration_ < 0) {
        restored_at_iteration_ = iteration;
    }
}

void TestScript::write_layout(const LayoutFacts& f) const {
    if (!hooks_.layout_file) return;
    std::ostringstream j;
    j << "{\n  \"window\": [" << f.window.width << ", " << f.window.height << "],\n";
    j << "  \"image\": [" << f.image_width << ", " << f.image_height << "],\n";
    j << "  \"iterations\": " << f.iterations << ",\n";
    j << "  \"swapchains\": " << f.swapchains << ",\n";
    j << "  \"resized_at_iteration\": " << resized_at_iteration_ << ",\n";
    j << "  \"minimized\": {\"frames\": " << minimized_frames_ << ", \"iterations\": " << minimized_iterations_
      << ", \"at_iteration\": " << minimized_at_iteration_ << ", \"restored_at_iteration\": " << restored_at_iteration_
      << "},\n  \"panels\": {";
    const char* names[4] = {"target", "current", "diff", "gradient"};
    for (size_t i = 0; i < 4; ++i) {
        const PanelRect& r = f.panels[i];
        j << (i ? ",\n" : "\n") << "    \"" << names[i] << "\": [" << r.x0 << ", " << r.y0 << ", " << r.x1 << ", "
          << r.y1 << "]";
    }
    const EnvironmentFacts& e = f.environment;
    j << std::boolalpha << "\n  },\n  \"environment\": {\"present\": " << e.present << ", \"free\": " << e.free
      << ", \"frames_drawn\": " << e.frames_drawn << ", \"iteration\": " << e.iteration
      << ", \"max_gradient\": " << e.max_gradient << ", \"file\": " << json_string(e.file) << ", \"panels\": {";
    const char* env_names[3] = {"map", "current", "gradient"};
    for (size_t i = 0; i < 3; ++i) {
        const PanelRect& r = e.rects[i];
        j << (i ? ", " : "") << "\"" << env_names[i] << "\": [" << r.x0 << ", " << r.y0 << ", " << r.x1 << ", " << r.y1
          << "]";
    }
    const auto rect = [&](const PanelRect& r) { j << "[" << r.x0 << ", " << r.y0 << ", " << r.x1 << ", " << r.y1 << "]"; };
    const TextureViewFacts& t = f.textures;
    j << "}},\n  \"textures\": {\"selected\": " << t.selected << ", \"frames_drawn\": " << t.frames_drawn
      << ", \"iteration\": " << t.iteration << ", \"gradient_scale\": " << t.gradient_scale << ", \"zoom\": " << t.zoom
      << ", \"panels\": {";
    const char* texture_names[3] = {"current", "true", "gradient"};
    for (size_t i = 0; i < 3; ++i) {
        j << (i ? ", " : "") << "\"" << texture_names[i] << "\": ";
        rect(t.rects[i]);
    }
    j << "}, \"items\": [";
    for (size_t i = 0; i < t.items.size(); ++i) {
        j << (i ? ", " : "") << "{\"path\": " << json_string(t.items[i].path) << ", \"size\": [" << t.items[i].width
          << ", " << t.items[i].height << "], \"thumbnail\": ";
        rect(t.items[i].thumbnail);
        j << "}";
    }
    const GradientViewFacts& g = f.gradients;
    j << "]},\n  \"gradient_images\": {\"available\": " << g.available << ", \"parameter\": " << json_string(g.parameter)
      << ", \"view\": " << g.view << ", \"iteration\": " << g.iteration << ", \"frames_drawn\": " << g.frames_drawn
      << ", \"computed\": " << g.computed << ", \"scale\": " << g.scale << ", \"sum\": " << g.sum
      << ", \"edge_pixels\": " << g.edge_pixels << ", \"panel\": ";
    rect(g.rect);
    j << "},\n  \"status\": " << json_string(f.status) << ",\n  \"scene_picker\": " << json_string(f.scene_picker)
      << ",\n  \"clipped_cells\": " << f.table.clipped_cells << ",\n  \"parameter_table\": [";
    for (size_t r = 0; r < f.table.rows.size(); ++r) {
        j << (r ? ",\n    [" : "\n    [");
        for (size_t c = 0; c < f.table.rows[r].size(); ++c) j << (c ? ", " : "") << json_string(f.table.rows[r][c]);
        j << "]";
    }
    j << "],\n  \"curves\": [";
    const auto strings = [&](const std::vector<std::string>& v) {
        j << "[";
        for (size_t i = 0; i < v.size(); ++i) j << (i ? ", " : "") << json_string(v[i]);
        j << "]";
    };
    for (size_t i = 0; i < f.curves.size(); ++i) {
        const CurveFacts& c = f.curves[i];
        j << (i ? ",\n    " : "\n    ") << "{\"title\": " << json_string(c.title) << ", \"plot\": [" << c.plot.x0 << ", "
          << c.plot.y0 << ", " << c.plot.x1 << ", " << c.plot.y1 << "], \"y_ticks\": ";
        strings(c.y_ticks);
        j << ", \"x_ticks\": ";
        strings(c.x_ticks);
        j << "}";
    }
    j << "],\n  \"orbit_lights\": [";
    for (size_t i = 0; i < f.orbit_lights.size(); ++i) j << (i ? ", " : "") << json_string(f.orbit_lights[i]);
    j << "],\n  \"shadow_switches\": " << f.shadow_switches;
    j << ",\n  \"flicker\": {\"on\": " << f.flicker.on << ", \"current_shows_target\": " << f.flicker.shows_target
      << "}\n}\n";
    app::write_file_atomic(*hooks_.layout_file, j.str());
}

} // namespace adjoint::studio
