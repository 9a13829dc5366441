// The texture panels: free texture parameters read back at the panels' cadence, packed for display on the host
// (a texture parameter is at most a few hundred texels wide), drawn as table thumbnails and as the Textures tab.
#include "texture_view.h"

#include "clock.h"
#include "environment.h"
#include "panels.h"

#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/report.h>

#include <algorithm>
#include <cmath>

namespace adjoint::studio {

namespace {

// A parameter's texels (3 floats each, linear) for display: values past 1 (radiance) through Reinhard, the
// rest clamped; sRGB-encoded either way, but for data textures, shown as stored (show_as_stored).
std::vector<uint32_t> packed_texels(const std::vector<float>& rgb, bool radiance, bool data) {
    const ToneMap map = radiance ? ToneMap::reinhard : ToneMap::clamp;
    if (!data) return tone_map(rgb, 0.0f, map);
    std::vector<float> stored = rgb;
    app::show_as_stored(stored);
    return tone_map(stored, 0.0f, map);
}

// d loss / d texel as report.png draws it: the sum over RGB on the diverging map, full scale its 99th percentile.
std::vector<uint32_t> packed_gradient(const std::vector<float>& g, uint32_t width, uint32_t height, float* scale) {
    app::Image image(int(width), int(height), 3);
    image.pixels = g;
    return tone_map(app::gradient_picture(image, scale).pixels, 0.0f, ToneMap::clamp);
}

} // namespace

TextureView::TextureView(Device& device, Textures& textures)
    : device_(device), textures_(textures), stream_(device.create_stream()) {}

TextureView::Picture TextureView::make_picture(uint32_t width, uint32_t height) {
    return {textures_.create(width, height), device_.create_buffer<uint32_t>(size_t(width) * height)};
}

void TextureView::show(Picture& picture, const std::vector<uint32_t>& packed) {
    stream_ << picture.texels.copy_from(packed.data()) << synchronize();
    textures_.update(picture.id, picture.texels);
}

void TextureView::open(Session& session) {
    items_.clear();
    facts_ = {};
    selected_ = 0;
    zoom_ = {};
    shown_iteration_ = UINT32_MAX;
    last_read_ms_ = -1e300;
    if (!session.optimizable()) return;
    const std::vector<app::ParameterState>& params = session.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
        const app::ParameterState& p = params[i];
        const app::ParameterKindInfo& kind = app::kind_info(p.kind);
        if (kind.storage != app::ParameterStorage::texture || !p.texture_width || !p.texture_height) continue;
        const std::optional<app::Parameter> found = app::find_parameter(session.scene(), p.path);
        Item item{i, p.path, p.texture_width, p.texture_height, kind.hi > 1,
                  found && app::is_data_texture(session.scene(), *found), bool(p.true_value), {}, {}, {}};
        item.current = make_picture(item.width, item.height);
        item.gradient = make_picture(item.width, item.height);
        if (item.truth) {
            item.true_value = make_picture(item.width, item.height);
            show(item.true_value, packed_texels(*p.true_value, item.radiance, item.data));
        }
        facts_.items.push_back({item.path, item.width, item.height, {}});
        items_.push_back(std::move(item));
    }
    facts_.selected = items_.empty() ? -1 : 0;
}

void TextureView::catch_up(Session& session, bool running, bool quitting) {
    const double t = now_ms();
    if (items_.empty() || session.iteration() == shown_iteration_ || (running && !quitting && t - last_read_ms_ < 250))
        return;
    std::vector<float> value, gradient;
    for (Item& item : items_) {
        session.parameter_now(item.parameter, value, gradient);
        show(item.current, packed_texels(value, item.radiance, item.data));
        float scale = 0.0f;
        show(item.gradient, packed_gradient(gradient, item.width, item.height, &scale));
        if (&item == &items_[selected_]) facts_.gradient_scale = scale;
    }
    shown_iteration_ = session.iteration();
    facts_.iteration = shown_iteration_;
    last_read_ms_ = t;
}

const TextureView::Item* TextureView::find(size_t parameter) const {
    for (const Item& item : items_)
        if (item.parameter == parameter) return &item;
    return nullptr;
}

float TextureView::thumbnail_width(size_t parameter, float height) const {
    const Item* item = find(parameter);
    return item ? std::floor(height * float(item->width) / float(item->height)) : 0.0f;
}

void TextureView::draw_thumbnail(size_t parameter, float height) {
    const Item* item = find(parameter);
    if (!item) return;
    const size_t index = size_t(item - items_.data());
    const ImVec2 size{thumbnail_width(parameter, height), height};
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};
    ImGui::SetCursorScreenPos(p);
    ImGui::PushID(int(parameter));
    if (ImGui::InvisibleButton("thumbnail", size)) {
        if (selected_ != index) zoom_ = {};
        selected_ = index;
        facts_.selected = int(index);
        tab_requested_ = true;
        shown_iteration_ = UINT32_MAX;   // the scale of the newly selected one
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: click to open it in the Textures tab", item->path.c_str());
    ImGui::PopID();
    const ImVec2 q{p.x + size.x, p.y + size.y};
    textures_.draw(item->current.id, p, q);
    facts_.items[index].thumbnail = {p.x, p.y, q.x, q.y};
}

void TextureView::draw_picture(const Picture& picture, const char* caption, ImVec2 size, size_t rect) {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(caption);
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};
    ImGui::SetCursorScreenPos(p);
    ImGui::PushID(int(rect));
    ImGui::InvisibleButton("picture", size);
    ImGui::PopID();
    zoom_.interact(p, size);
    const ImVec2 q{p.x + size.x, p.y + size.y};
    textures_.draw(picture.id, p, q, zoom_.uv0(), zoom_.uv1());
    facts_.rects[rect] = {p.x, p.y, q.x, q.y};
    ImGui::EndGroup();
}

void TextureView::draw() {
    if (items_.empty()) {
        ImGui::TextUnformatted("No texture parameter is free.");
        return;
    }
    selected_ = std::min(selected_, items_.size() - 1);
    // Which texture: a combo as well as the table's thumbnails.
    ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x * 0.5f, 360.0f));
    if (ImGui::BeginCombo("##texture", items_[selected_].path.c_str())) {
        for (size_t i = 0; i < items_.size(); ++i)
            if (ImGui::Selectable(items_[i].path.c_str(), i == selected_) && i != selected_) {
                selected_ = i;
                zoom_ = {};
                shown_iteration_ = UINT32_MAX;
            }
        ImGui::EndCombo();
    }
    facts_.selected = int(selected_);
    const Item& item = items_[selected_];
    ImGui::SameLine();
    ImGui::TextDisabled("%ux%u, iteration %u; %s", item.width, item.height, facts_.iteration,
                        zoom_.zoom > 1.0f ? format("zoom %.1fx (double-click resets)", zoom_.zoom).c_str()
                                          : "wheel: zoom, drag: pan");
    // As many pictures across as there are, square texels, as large as the room allows (whole pixels a texel
    // when it is magnified, so that texels stay square and sharp under nearest filtering).
    const int n = item.truth ? 3 : 2;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float lines = 2.0f * ImGui::GetTextLineHeightWithSpacing() + 4.0f;
    const float across = (avail.x - float(n - 1) * tiles::kGap) / float(n * item.width);
    float scale = std::max(std::min(across, (avail.y - lines) / float(item.height)), 0.25f);
    if (scale >= 1.0f) scale = std::floor(scale);
    const ImVec2 size{std::floor(float(item.width) * scale), std::floor(float(item.height) * scale)};
    draw_picture(item.current, "current", size, 0);
    ImGui::SameLine(0, tiles::kGap);
    if (item.truth) {
        draw_picture(item.true_value, "true", size, 1);
        ImGui::SameLine(0, tiles::kGap);
    }
    facts_.rects[1] = item.truth ? facts_.rects[1] : PanelRect{};
    draw_picture(item.gradient, "d loss / d texel (sum over RGB)", size, 2);
    ImGui::TextDisabled("gradient: blue < 0 < orange, full scale the 99th percentile of |sum| = %s",
                        format("%.3g", facts_.gradient_scale).c_str());
    facts_.zoom = zoom_.zoom;
    ++facts_.frames_drawn;
}

} // namespace adjoint::studio
