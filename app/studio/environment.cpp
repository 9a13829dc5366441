// The environment panel: tone mapping and the gradient colours on the host (the maps are small: a free map is
// the parameter's own texels, read back at the panel's cadence; the file's map is shown at most 512 wide), the
// panel's images, and the scene reloaded with another environment file.
#include "environment.h"

#include "clock.h"
#include "panels.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace adjoint::studio {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kMaxMapWidth = 512;

float unit(float x) { return x > 0.0f ? std::min(x, 1.0f) : 0.0f; }   // NaN as 0

float encode_srgb(float linear) {
    const float c = unit(linear);
    return c <= 0.0031308f ? c * 12.92f : 1.055f * std::pow(c, 1.0f / 2.4f) - 0.055f;
}

// sRGB-encoded [0, 1] -> R8G8B8A8, R in the low byte, alpha 255 (display.h's layout).
uint32_t pack(float r, float g, float b) {
    auto byte = [](float c) { return uint32_t(std::lround(unit(c) * 255.0f)); };
    return byte(r) | (byte(g) << 8) | (byte(b) << 16) | 0xff000000u;
}

// The file's map averaged down by a whole factor to at most kMaxMapWidth wide (the panel is narrower still).
std::vector<float> downsample(const app::LinearImage& m, uint32_t& width, uint32_t& height) {
    const uint32_t f = std::max(1u, (m.width + kMaxMapWidth - 1) / kMaxMapWidth);
    width = std::max(1u, m.width / f);
    height = std::max(1u, m.height / f);
    std::vector<float> rgb(size_t(width) * height * 3, 0.0f);
    const float w = 1.0f / float(f * f);
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            float* out = &rgb[(size_t(y) * width + x) * 3];
            for (uint32_t dy = 0; dy < f; ++dy)
                for (uint32_t dx = 0; dx < f; ++dx) {
                    const float4& t = m.texels[size_t(y * f + dy) * m.width + x * f + dx];
                    out[0] += t.x * w, out[1] += t.y * w, out[2] += t.z * w;
                }
        }
    return rgb;
}

bool is_environment_file(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return ext == ".exr" || ext == ".hdr";
}

} // namespace

std::vector<uint32_t> tone_map(const std::vector<float>& rgb, float exposure, ToneMap op) {
    const float scale = std::exp2(exposure);
    auto curve = [&](float x) {
        x *= scale;
        return op == ToneMap::reinhard ? (x > 0.0f ? x / (1.0f + x) : 0.0f) : x;
    };
    std::vector<uint32_t> out(rgb.size() / 3);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = pack(encode_srgb(curve(rgb[3 * i])), encode_srgb(curve(rgb[3 * i + 1])),
                      encode_srgb(curve(rgb[3 * i + 2])));
    return out;
}

float gradient_colours(const std::vector<float>& g, std::vector<uint32_t>& out) {
    const size_t n = g.size() / 3;
    std::vector<float> sum(n);
    float g_max = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        sum[i] = g[3 * i] + g[3 * i + 1] + g[3 * i + 2];
        if (std::isfinite(sum[i])) g_max = std::max(g_max, std::abs(sum[i]));
    }
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const float r = g_max > 0.0f && std::isfinite(sum[i]) ? sum[i] / g_max : 0.0f;
        // A square-root scale, as the dL/dI panel: a few large texels would otherwise leave the rest black.
        // Its colours too: blue - black (0) - red, on the dark theme.
        const float a = std::min(std::sqrt(std::abs(r)), 1.0f);
        const float3 end = r < 0.0f ? float3(0.25f, 0.55f, 1.0f) : float3(1.0f, 0.3f, 0.1f);
        out[i] = pack(end.x * a, end.y * a, end.z * a);
    }
    return g_max;
}

std::vector<fs::path> environment_files(const std::vector<fs::path>& folders) {
    std::vector<fs::path> all;
    for (const fs::path& folder : folders) {
        std::error_code ec;   // a folder that is missing or unreadable simply offers nothing
        if (!fs::is_directory(folder, ec)) continue;
        std::vector<fs::path> here;
        for (const auto& entry : fs::directory_iterator(folder, ec))
            if (entry.is_regular_file(ec) && is_environment_file(entry.path())) here.push_back(entry.path());
        std::sort(here.begin(), here.end());
        all.insert(all.end(), here.begin(), here.end());
    }
    return all;
}

app::Scene scene_with_environment(const app::Scene& scene, const fs::path& map) {
    if (scene.source_file.empty()) fail(scene.display_name, ": not read from a file, so it cannot be reloaded");
    std::ifstream in(scene.source_file, std::ios::binary);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!in || j.is_discarded() || !j.is_object())
        fail(scene.source_file.string(), ": cannot be read again as JSON (changed since it was opened?)");
    const std::string file = fs::absolute(map).lexically_normal().string();
    nlohmann::json& lights = j["lights"];
    if (!lights.is_array()) lights = nlohmann::json::array();
    bool replaced = false;
    for (nlohmann::json& light : lights)
        if (light.is_object() && light.value("type", "") == "environment") {
            light["file"] = file;
            light.erase("color");   // a uniform sky becomes a map: the loader takes one or the other
            replaced = true;
        }
    if (!replaced) lights.push_back({{"name", "environment"}, {"type", "environment"}, {"file", file}});
    // The loader checks the map (readable, 2:1) as it checks any scene; its errors name the file.
    app::Scene out = app::load_scene_from_string(j.dump(), scene.source_file.parent_path(), scene.display_name);
    out.source_file = scene.source_file;
    const app::Resolution size{scene.camera.width, scene.camera.height};   // --resolution, if it was given
    if (out.camera.width != size.width || out.camera.height != size.height) app::override_resolution(out, size);
    return out;
}

// ---- the panel --------------------------------------------------------------------------------------------

EnvironmentView::EnvironmentView(Device& device, Textures& textures)
    : device_(device), textures_(textures), stream_(device.create_stream()) {}

void EnvironmentView::open(Session& session) {
    light_ = parameter_ = -1;
    truth_ = false;
    facts_ = {};
    shown_iteration_ = UINT32_MAX;
    last_read_ms_ = -1e300;
    const app::Scene& scene = session.scene();
    for (size_t i = 0; i < scene.lights.size(); ++i)
        if (scene.lights[i].type == "environment" && scene.lights[i].texture >= 0) light_ = int(i);
    if (light_ < 0) return;
    const app::Light& light = scene.lights[size_t(light_)];
    facts_.present = true;
    facts_.file = light.file;
    map_.rgb = downsample(scene.textures.at(size_t(light.texture)), map_.width, map_.height);
    map_.id = textures_.create(map_.width, map_.height);
    map_.texels = device_.create_buffer<uint32_t>(size_t(map_.width) * map_.height);
    if (scene.optimize && session.optimizable())
        for (size_t i = 0; i < scene.optimize->parameters.size(); ++i) {
            const app::Parameter& p = scene.optimize->parameters[i];
            if (p.kind == app::ParameterKind::light_texture && p.target == uint32_t(light_)) parameter_ = int(i);
        }
    if (parameter_ >= 0) {
        const app::Parameter& p = scene.optimize->parameters[size_t(parameter_)];
        truth_ = scene.optimize->target_is_scene;
        facts_.free = true;
        for (Image* image : {&current_, &gradient_}) {
            image->width = p.texture_width;
            image->height = p.texture_height;
            image->id = textures_.create(p.texture_width, p.texture_height);
            image->texels = device_.create_buffer<uint32_t>(size_t(p.texture_width) * p.texture_height);
        }
    }
    map_retone_ = true;
}

void EnvironmentView::show(Image& image, const std::vector<uint32_t>& packed) {
    stream_ << image.texels.copy_from(packed.data()) << synchronize();
    textures_.update(image.id, image.texels);
}

void EnvironmentView::catch_up(Session& session, bool running, bool quitting) {
    if (!present()) return;
    const double t = now_ms();
    if (free() && session.iteration() != shown_iteration_ && (t - last_read_ms_ > 250 || !running || quitting)) {
        session.parameter_now(size_t(parameter_), current_.rgb, gradient_rgb_);
        shown_iteration_ = session.iteration();
        last_read_ms_ = t;
        facts_.iteration = shown_iteration_;
        std::vector<uint32_t> packed;
        facts_.max_gradient = gradient_colours(gradient_rgb_, packed);
        show(gradient_, packed);
        current_retone_ = true;
    }
    if (map_retone_) show(map_, tone_map(map_.rgb, exposure_, ToneMap(tone_)));
    if (current_retone_ && free()) show(current_, tone_map(current_.rgb, exposure_, ToneMap(tone_)));
    map_retone_ = current_retone_ = false;
}

void EnvironmentView::draw_image(const Image& image, const char* caption, const std::string& detail, ImVec2 size,
                                 size_t rect) {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(caption);
    ImVec2 p = ImGui::GetCursorScreenPos();
    p = {std::floor(p.x), std::floor(p.y)};
    ImGui::SetCursorScreenPos(p);
    ImGui::Dummy(size);
    const ImVec2 q{p.x + size.x, p.y + size.y};
    textures_.draw(image.id, p, q);
    facts_.rects[rect] = {p.x, p.y, q.x, q.y};
    ImGui::TextUnformatted(detail.c_str());
    ImGui::EndGroup();
}

void EnvironmentView::draw(Session& session) {
    if (!present()) {
        ImGui::TextUnformatted("The scene has no environment light with a map.");
        return;
    }
    ImGui::SetNextItemWidth(140);
    if (ImGui::SliderFloat("exposure (stops)", &exposure_, -8.0f, 8.0f, "%.1f")) map_retone_ = current_retone_ = true;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(100);
    if (ImGui::Combo("##tone", &tone_, "Reinhard\0clamp\0")) map_retone_ = current_retone_ = true;
    ImGui::SameLine();
    ImGui::TextDisabled("(how?)");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Display only: radiance x 2^exposure, then Reinhard x / (1 + x) per channel (or clamped\n"
                          "to [0, 1]), then sRGB-encoded. The gradient is d loss / d texel of the last iteration,\n"
                          "summed over RGB: blue < 0 < red on a square-root scale, full scale its largest |sum|.");
    // As many 2:1 images across as there are (1 or 3), as large as the room allows.
    const int n = free() ? 3 : 1;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float lines = 2.0f * ImGui::GetTextLineHeightWithSpacing() + 4.0f;
    float w = std::floor((avail.x - float(n - 1) * tiles::kGap) / float(n));
    w = std::max(std::min(w, std::floor(2.0f * (avail.y - lines))), 32.0f);
    const ImVec2 size{2.0f * std::floor(w * 0.5f), std::floor(w * 0.5f)};   // exactly 2:1, as the maps
    const app::Light& light = session.scene().lights.at(size_t(light_));
    const std::string name = fs::path(light.file).filename().string();
    const char* caption = !free() ? "map (fixed)" : truth_ ? "true map (the file's)" : "the file's map";
    draw_image(map_, caption, name + ", shown " + std::to_string(map_.width) + "x" + std::to_string(map_.height), size,
               0);
    if (free()) {
        ImGui::SameLine(0, tiles::kGap);
        draw_image(current_, "current", "iteration " + std::to_string(shown_iteration_ == UINT32_MAX ? 0 : shown_iteration_) +
                   ", " + std::to_string(current_.width) + "x" + std::to_string(current_.height), size, 1);
        ImGui::SameLine(0, tiles::kGap);
        draw_image(gradient_, "d loss / d map (sum over RGB)",
                   "blue < 0 < red, sqrt; max " + format("%.2g", facts_.max_gradient), size, 2);
    }
    ++facts_.frames_drawn;
}

} // namespace adjoint::studio
