// The studio's texture panels: every free texture parameter (a material's texture, an environment map) as a
// thumbnail in the parameter table that opens it in the Textures tab, current | true | d loss / d texel side by
// side and zoomable, read back at the panels' cadence.
#pragma once
#include "session.h"
#include "textures.h"
#include "zoom_pan.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace adjoint::studio {

// What --test-layout reports about the thumbnails and the panel.
struct TextureViewFacts {
    struct Item {
        std::string path;
        uint32_t width = 0, height = 0;
        PanelRect thumbnail;              // in the parameter table, the last frame it was drawn
    };
    std::vector<Item> items;
    int selected = -1;                    // the item the panel shows
    uint32_t frames_drawn = 0;            // frames that drew the panel
    uint32_t iteration = 0;               // of the values shown
    float gradient_scale = 0;             // the gradient picture's full scale (99th percentile of |sum over RGB|)
    float zoom = 1;
    std::array<PanelRect, 3> rects{};     // current, true (empty without a truth), gradient
};

class TextureView {
public:
    TextureView(Device& device, Textures& textures);

    // After the workspace cleared its textures for a new session: one item per free texture parameter.
    void open(Session& session);
    // Values and gradients are read back at most every 0.25 s while running, and once the run stops.
    void catch_up(Session& session, bool running, bool quitting);
    bool any() const { return !items_.empty(); }

    // Inside the parameter table's cell for `parameter` (file order): its thumbnail, `height` pixels high (a
    // no-op for a parameter that is no texture). A click shows it in the panel and asks for the Textures tab.
    void draw_thumbnail(size_t parameter, float height);
    float thumbnail_width(size_t parameter, float height) const;   // 0 for a parameter that is no texture
    bool take_tab_request() { return std::exchange(tab_requested_, false); }

    void draw();   // the panel's contents, inside a tab
    const TextureViewFacts& facts() const { return facts_; }

private:
    struct Picture {
        Textures::Id id = 0;
        Buffer<uint32_t> texels;   // what the texture is copied from
    };
    struct Item {
        size_t parameter = 0;
        std::string path;
        uint32_t width = 0, height = 0;
        bool radiance = false;     // values past 1 (an environment map): Reinhard for display
        bool data = false;         // a data texture (is_data_texture): its values shown as stored (show_as_stored)
        bool truth = false;
        Picture current, true_value, gradient;
    };
    Picture make_picture(uint32_t width, uint32_t height);
    void show(Picture& picture, const std::vector<uint32_t>& packed);
    void draw_picture(const Picture& picture, const char* caption, ImVec2 size, size_t rect);
    const Item* find(size_t parameter) const;

    Device& device_;
    Textures& textures_;
    Stream stream_;
    std::vector<Item> items_;
    size_t selected_ = 0;
    ZoomPan zoom_;                         // the panel's three pictures share it
    bool tab_requested_ = false;
    uint32_t shown_iteration_ = UINT32_MAX;
    double last_read_ms_ = -1e300;
    TextureViewFacts facts_;
};

} // namespace adjoint::studio
