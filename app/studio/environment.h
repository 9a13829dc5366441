// The studio's environment panel: the scene's environment map tone-mapped for display and, when the map is a
// free parameter, its current value and last gradient; plus picking another environment file for the scene.
#pragma once
#include "session.h"
#include "textures.h"

#include <adjoint/app/scene.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

namespace adjoint::studio {

enum class ToneMap : int { reinhard = 0, clamp = 1 };

// Linear RGB (3 floats a texel, radiance that may exceed 1) -> packed sRGB RGBA8 as display.h lays texels out:
// scaled by 2^exposure, then Reinhard x / (1 + x) or a clamp to [0, 1] per channel, then sRGB-encoded.
std::vector<uint32_t> tone_map(const std::vector<float>& rgb, float exposure, ToneMap op);
// A signed gradient (3 floats a texel) -> blue (< 0) - black - red (> 0): per texel the sum over RGB divided by
// the largest |sum|, on a square-root scale as the dL/dI panel draws it. Returns that largest |sum|.
float gradient_colours(const std::vector<float>& g, std::vector<uint32_t>& out);

// The .exr and .hdr files in these folders (those that exist), by folder then name.
std::vector<std::filesystem::path> environment_files(const std::vector<std::filesystem::path>& folders);
// The scene's file read again with its environment light's `file` replaced by `map` (made absolute), or with
// a light "environment" of that map added when it has none. Errors as load_scene gives them (SceneError for an
// unreadable or non-2:1 map); the result keeps the scene's source_file, so the scene picker still knows it.
app::Scene scene_with_environment(const app::Scene& scene, const std::filesystem::path& map);

// What --test-layout reports about the panel.
struct EnvironmentFacts {
    bool present = false, free = false;
    uint32_t frames_drawn = 0;            // frames that drew the panel's images
    uint32_t iteration = 0;               // of the value and gradient shown
    float max_gradient = 0;               // the gradient image's full scale
    std::string file;                     // the environment light's file
    std::array<PanelRect, 3> rects{};     // map, current, gradient (the last two only when free)
};

class EnvironmentView {
public:
    EnvironmentView(Device& device, Textures& textures);

    // After the workspace cleared its textures for a new session: finds the environment light and makes the
    // panel's textures.
    void open(Session& session);
    // The value and gradient of a free map are read back at most every 0.25 s while running (the grid's
    // cadence), and once the run stops; the tone mapping is redone when its settings change.
    void catch_up(Session& session, bool running, bool quitting);
    bool present() const { return light_ >= 0; }
    bool free() const { return parameter_ >= 0; }
    void draw(Session& session);   // the panel's contents, inside a window or tab
    const EnvironmentFacts& facts() const { return facts_; }

private:
    struct Image {
        Textures::Id id = 0;
        uint32_t width = 0, height = 0;
        std::vector<float> rgb;            // linear, 3 floats a texel
        Buffer<uint32_t> texels;           // what the texture is copied from
    };
    void show(Image& image, const std::vector<uint32_t>& packed);
    void draw_image(const Image& image, const char* caption, const std::string& detail, ImVec2 size, size_t rect);

    Device& device_;
    Textures& textures_;
    Stream stream_;
    int light_ = -1, parameter_ = -1;
    bool truth_ = false;                   // the file's map is the truth (target: the scene)
    Image map_, current_, gradient_;
    std::vector<float> gradient_rgb_;
    float exposure_ = 0.0f;
    int tone_ = int(ToneMap::reinhard);
    bool map_retone_ = false, current_retone_ = false;   // the tone mapping to redo
    uint32_t shown_iteration_ = UINT32_MAX;
    double last_read_ms_ = -1e300;
    EnvironmentFacts facts_;
};

} // namespace adjoint::studio
