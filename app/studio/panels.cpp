// The image panels (zoomable, all four sharing zoom and centre) and the views window: the orbit view the
// mouse turns, and the grid of the scene's views.
#include "panels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace adjoint::studio {

std::string format(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

namespace {

// The images window: title bar, caption line, the panels, detail line.
float image_layout_height(float panel_h) {
    const ImGuiStyle& style = ImGui::GetStyle();
    return ImGui::GetFrameHeight() + 2.0f * style.WindowPadding.y + 2.0f * ImGui::GetFrameHeightWithSpacing() +
           2.0f * style.ItemSpacing.y + panel_h;
}

const char* kShow[] = {"target", "current", "|diff|", "dL/dI"};

// The flicker's half period: the current panel shows the target for this long, then the current image.
constexpr double kFlickerSeconds = 0.5;

// The panels take at most this share of the window's height (the curves and the table need the rest).
constexpr float kImagesShare = 0.4f;

// Four panels across `width` and at most `height` tall: shrunk to fit, or a small image magnified by a whole
// factor, so that the sampler's nearest filter shows each texel as a square of whole pixels.
float panel_scale(float w, float h, float width, float height) {
    const float fit = std::min(width / (4.0f * w), height / h);
    return fit >= 1.0f ? std::floor(fit) : fit;
}

// The grid of views: as many 64-pixel thumbnails across as fit.
struct Grid {
    int columns;
    float thumb;
    Grid(float width) : columns(std::max(1, int(width / 68.0f))), thumb(std::floor(width / float(columns)) - 4.0f) {}
};

} // namespace

// ---- images -----------------------------------------------------------------------------------------------

void ImagePanels::draw_image_panel(Textures::Id texture, const char* caption, const std::string& detail,
                                   ImVec2 size, int index, bool* toggle) {
    ImGui::BeginGroup();
    // Every caption at a checkbox's height (the current panel has one): the four panels then line up.
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(caption);
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};   // whole pixels: at 1:1 every texel lands on one pixel
    ImGui::SetCursorScreenPos(p);
    ImGui::PushID(index);
    ImGui::InvisibleButton("image", size);
    ImGui::PopID();
    zoom_.interact(p, size);   // all four panels share one zoom and centre
    ImVec2 q{p.x + size.x, p.y + size.y};
    textures_.draw(texture, p, q, zoom_.uv0(), zoom_.uv1());
    panel_rects_[size_t(index)] = {p.x, p.y, q.x, q.y};
    ImGui::TextUnformatted(detail.c_str());
    if (toggle) {
        ImGui::SameLine();
        ImGui::Checkbox("flicker", toggle);
    }
    ImGui::EndGroup();
}

float ImagePanels::draw_images() {
    Session* session = workspace_.session();
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float w = session ? float(session->width()) : 256.0f, h = session ? float(session->height()) : 256.0f;
    const float avail = display.x - 2.0f * ImGui::GetStyle().WindowPadding.x - 3.0f * tiles::kGap - 4.0f;
    const float scale = panel_scale(w, h, std::max(avail, 16.0f), std::max(display.y * kImagesShare, 16.0f));
    const ImVec2 size{std::floor(w * scale), std::floor(h * scale)};
    ImGui::SetNextWindowPos({0, 0}, ImGuiCond_Always);
    const float top = image_layout_height(size.y);
    ImGui::SetNextWindowSize({display.x, top}, ImGuiCond_Always);
    const uint32_t view = session ? session->selected_view : 0;
    std::string title = "Images";
    if (session && session->view_count() > 1) title += " - view " + std::to_string(view);
    title += "###images";
    ImGui::Begin(title.c_str(), nullptr, tiles::kFlags | ImGuiWindowFlags_NoScrollbar);
    if (!session) {
        ImGui::TextUnformatted("No scene: pick one in the Run window.");
        ImGui::End();
        return top;
    }
    const ViewImages& im = session->view(view);
    const auto& ids = workspace_.view_textures(view);
    const std::string zoom = zoom_.zoom > 1.0f ? format("zoom %.1fx (wheel, drag; double-click resets)", zoom_.zoom)
                                          : std::string("wheel: zoom, drag: pan");
    draw_image_panel(ids[0], "target", zoom, size, 0);
    ImGui::SameLine(0, tiles::kGap);
    draw_current_panel(ids, size);
    ImGui::SameLine(0, tiles::kGap);
    draw_image_panel(ids[2], "|current - target|", "inferno, full scale " + format("%.3g", im.scale.max_diff), size,
                     2);
    ImGui::SameLine(0, tiles::kGap);
    draw_image_panel(ids[3], "dL/dI (sum over RGB)",
                     "blue < 0 < red (sqrt scale), max " + format("%.3g", im.scale.max_gradient), size, 3);
    ImGui::End();
    return top;
}

// The current image, or with the flicker on the target every other half period (the caption says which); the
// flicker's checkbox sits on its detail line.
void ImagePanels::draw_current_panel(const std::array<Textures::Id, 4>& ids, ImVec2 size) {
    flicker_.shows_target = flicker_.on && int(ImGui::GetTime() / kFlickerSeconds) % 2 == 1;
    const char* caption = flicker_.shows_target ? "TARGET (flicker)" : flicker_.on ? "current (flicker)" : "current";
    draw_image_panel(flicker_.shows_target ? ids[0] : ids[1], caption,
                     "iteration " + std::to_string(workspace_.session()->iteration()), size, 1, &flicker_.on);
}

// ---- orbit view and the grid of views ---------------------------------------------------------------------

void ImagePanels::draw_views(float top) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float x = std::max(display.x - tiles::kRightWidth, tiles::kLeftWidth + 100.0f);
    ImGui::SetNextWindowPos({x, top}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({std::max(display.x - x, 50.0f), std::max(display.y - top, 50.0f)}, ImGuiCond_Always);
    ImGui::Begin("Views", nullptr, tiles::kFlags);
    if (Session* session = workspace_.session()) {
        ImGui::TextUnformatted("orbit (drag: turn, wheel: distance)");
        // The grid of views below keeps its room: the orbit view shrinks first.
        float grid_h = 0.0f;
        if (session->view_count() > 1) {
            const Grid grid(ImGui::GetContentRegionAvail().x);
            const uint32_t rows = (session->view_count() + uint32_t(grid.columns) - 1) / uint32_t(grid.columns);
            grid_h = float(rows) * (grid.thumb * float(session->height()) / float(session->width()) + 4.0f) +
                     3.0f * ImGui::GetFrameHeightWithSpacing();
        }
        draw_orbit(grid_h);
        ImGui::Checkbox("follow the run", &workspace_.orbit_follows);
        if (session->view_count() > 1) draw_grid();
    }
    ImGui::End();
}

void ImagePanels::draw_orbit(float grid_height) {
    OrbitView& orbit = workspace_.orbit();
    const float avail_x = ImGui::GetContentRegionAvail().x;
    size_t switches = 1;   // "follow the run" and the shadows' switches under the view
    for (const app::Light& l : orbit.lights()) switches += l.shadows;
    const float room =
        ImGui::GetContentRegionAvail().y - grid_height - float(switches) * ImGui::GetFrameHeightWithSpacing();
    const float side = std::floor(std::max(std::min({avail_x, float(orbit.size()), room}), 64.0f));
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};
    ImGui::SetCursorScreenPos(p);
    ImGui::InvisibleButton("orbit", {side, side});
    const ImGuiIO& io = ImGui::GetIO();
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f) &&
        (io.MouseDelta.x != 0.0f || io.MouseDelta.y != 0.0f))
        orbit.turn(io.MouseDelta.x, io.MouseDelta.y);
    if (ImGui::IsItemHovered() && io.MouseWheel != 0.0f) orbit.zoom(io.MouseWheel);
    if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
        orbit.reset(workspace_.session()->scene());
    textures_.draw(workspace_.orbit_texture(), p, {p.x + side, p.y + side});
    draw_lights(p, side);
}

// The orbit view's point lights (a dot at the position) and suns (an arrow along the direction the light
// travels, ending at the target), named; under the view, a switch for each light that casts shadows.
void ImagePanels::draw_lights(ImVec2 corner, float side) {
    OrbitView& orbit = workspace_.orbit();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float k = side / float(orbit.size());
    const ImU32 colour = IM_COL32(255, 220, 60, 255);
    auto at = [&](const float3& w, ImVec2& out) {
        float x = 0, y = 0;
        if (!orbit.project(w, x, y)) return false;
        out = {corner.x + x * k, corner.y + y * k};
        return true;
    };
    const std::vector<app::Light>& lights = orbit.lights();
    orbit_lights_.clear();
    draw->PushClipRect(corner, {corner.x + side, corner.y + side}, true);
    for (const app::Light& l : lights) {
        ImVec2 a, b;
        const float3 t = orbit.target();
        const float r = 0.5f * orbit.distance();
        const float3 from{t.x - l.direction.x * r, t.y - l.direction.y * r, t.z - l.direction.z * r};
        if (l.type == "point" && at(l.position, a)) {
            draw->AddCircleFilled(a, 5.0f, colour);
        } else if (l.type == "directional" && at(from, a) && at(t, b)) {
            draw->AddLine(a, b, colour, 2.0f);
            draw->AddCircleFilled(a, 4.0f, colour);
        } else {
            continue;
        }
        draw->AddText({a.x + 7.0f, a.y - 7.0f}, colour, l.name.c_str());
        if (a.x >= corner.x && a.y >= corner.y && a.x <= corner.x + side && a.y <= corner.y + side)
            orbit_lights_.push_back(l.name);
    }
    draw->PopClipRect();
    shadow_switches_ = 0;
    for (size_t i = 0; i < lights.size(); ++i) {
        if (!lights[i].shadows) continue;
        bool on = !orbit.shadows_off(i);
        if (ImGui::Checkbox(("shadows: " + lights[i].name).c_str(), &on)) orbit.set_shadows_off(i, !on);
        ++shadow_switches_;
    }
}

void ImagePanels::draw_grid() {
    Session& session = *workspace_.session();
    ImGui::Separator();
    ImGui::Text("%u views (click one to inspect it)", session.view_count());
    for (int i = 0; i < 4; ++i) {
        if (i) ImGui::SameLine();
        ImGui::RadioButton(kShow[i], &grid_show_, i);
    }
    const Grid grid(ImGui::GetContentRegionAvail().x);
    const float aspect = float(session.height()) / float(session.width());
    const ImVec2 thumb{grid.thumb, grid.thumb * aspect};
    for (uint32_t v = 0; v < session.view_count(); ++v) {
        if (v % uint32_t(grid.columns) != 0) ImGui::SameLine(0, 4.0f);
        ImVec2 q = ImGui::GetCursorScreenPos();
        ImGui::PushID(int(v));
        if (ImGui::InvisibleButton("view", thumb)) {
            session.selected_view = v;
            session.refresh({v});
        }
        ImGui::PopID();
        const ImVec2 q1{q.x + thumb.x, q.y + thumb.y};
        textures_.draw(workspace_.view_textures(v)[size_t(grid_show_)], q, q1);
        if (v == session.selected_view) ImGui::GetWindowDrawList()->AddRect(q, q1, IM_COL32(255, 200, 0, 255));
    }
}

} // namespace adjoint::studio
