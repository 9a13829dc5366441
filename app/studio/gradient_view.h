// The studio's Gradient images tab (with --diagnose): for a chosen free parameter, each pixel's own share of
// d loss / d the parameter in the selected view (Optimizer::attribute_pixels, as adjoint-optimize --diagnose
// writes it), live, with the silhouette-edge pixels that carry visibility gradients drawn over it.
#pragma once
#include "session.h"
#include "textures.h"
#include "zoom_pan.h"

#include <string>
#include <vector>

namespace adjoint::studio {

// What --test-layout reports about the tab.
struct GradientViewFacts {
    bool available = false;           // --diagnose and a scene to optimize
    std::string parameter;            // the path shown
    uint32_t view = 0, iteration = 0;
    uint32_t frames_drawn = 0, computed = 0;
    float scale = 0;                  // full scale: the 99th percentile of |pixel share|
    double sum = 0;                   // the image's sum (over every view it is the gradient's sum)
    uint32_t edge_pixels = 0;         // in the view shown
    PanelRect rect;
};

class GradientView {
public:
    GradientView(Device& device, Textures& textures);
    void open(Session& session);
    // Recomputed while the tab is seen: at most every 0.5 s (or 4 times its cost) while running, once when
    // the run stops, and when the parameter, the view or the edge overlay changes.
    void catch_up(Session& session, bool running, bool quitting);
    bool available() const { return facts_.available; }
    void draw();   // inside its tab
    const GradientViewFacts& facts() const { return facts_; }

private:
    Device& device_;
    Textures& textures_;
    Stream stream_;
    Textures::Id id_ = 0;
    Buffer<uint32_t> texels_;
    uint32_t width_ = 0, height_ = 0;
    std::vector<size_t> parameters_;   // the free parameters (file order) offered
    std::vector<std::string> names_;
    int chosen_ = 0;                   // index into parameters_
    bool edges_ = true;                // the edge overlay
    bool drawn_ = false;               // the tab was drawn since the last catch_up
    bool dirty_ = true;                // the choice changed
    uint32_t computed_iteration_ = UINT32_MAX, computed_view_ = UINT32_MAX;
    double last_ms_ = -1e300, cost_ms_ = 0;
    ZoomPan zoom_;
    GradientViewFacts facts_;
};

} // namespace adjoint::studio
