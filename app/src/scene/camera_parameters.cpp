// The camera's parameter kinds' refusals, intrinsics access and init readers (camera_parameters.h).
#include "scene/camera_parameters.h"

#include "scene/json_value.h"

#include <cmath>

namespace adjoint::app::detail {

std::string single_view(const Scene& s, uint32_t, uint32_t) {
    if (s.views.size() == 1) return {};
    return "the camera can be optimized only when it is the only view (this scene has " +
           std::to_string(s.views.size()) + ")";
}

// fov_y is the camera's focal length only when it gives no intrinsics (those hold fx and fy apart).
std::string fov_camera(const Scene& s, uint32_t t, uint32_t p) {
    if (std::string why = single_view(s, t, p); !why.empty()) return why;
    if (!s.views[0].intrinsics) return {};
    return "the camera gives intrinsics (fx, fy, cx, cy), not fov_y";
}
// ... and the intrinsics are a parameter only of a camera that gives them (fov_y says too little of them).
std::string intrinsics_camera(const Scene& s, uint32_t t, uint32_t p) {
    if (std::string why = single_view(s, t, p); !why.empty()) return why;
    if (s.views[0].intrinsics) return {};
    return "the camera gives fov_y, not intrinsics (fx, fy, cx, cy): optimize camera.fov_y";
}

// Every view has an intrinsics slot; a view without intrinsics holds the ones its fov_y means (centred,
// square pixels), which the device ignores (ViewRec::has_intrinsics).
void read_intrinsics(const Scene& s, uint32_t view, float* out) {
    const Camera& c = s.views[view];
    Intrinsics k = c.intrinsics.value_or(Intrinsics{});
    if (!c.intrinsics) {
        k.fy = static_cast<float>(0.5 * c.height / std::tan(0.5 * c.fov_y * 3.14159265358979 / 180));
        k = {k.fy, k.fy, 0.5f * float(c.width), 0.5f * float(c.height)};
    }
    out[0] = k.fx, out[1] = k.fy, out[2] = k.cx, out[3] = k.cy;
}
void write_intrinsics(Scene& s, const Parameter&, std::span<const float> v) {
    const Intrinsics k{v[0], v[1], v[2], v[3]};
    s.camera.intrinsics = k;
    s.camera.fov_y = fov_y_of(k.fy, s.camera.height);   // kept equal, as the loader keeps it
    for (Camera& view : s.views) {
        view.intrinsics = k;
        view.fov_y = fov_y_of(k.fy, view.height);
    }
}

std::vector<float> init_fov(const JsonValue& init, const InitContext&, Parameter&) {
    const float fov = init.number_above(0, "a number of degrees in (0, 180)");
    if (!(fov < 180)) init.fail("expected a number of degrees in (0, 180)");
    return {fov};
}
// [fx, fy, cx, cy] in pixels at the camera's resolution (the same four as the camera's `intrinsics`).
std::vector<float> init_intrinsics(const JsonValue& init, const InitContext&, Parameter&) {
    if (!init.json().is_array() || init.array_size() != 4) init.fail("expected [fx, fy, cx, cy] in pixels");
    return {init[0].number_above(0, "a focal length in pixels > 0"), init[1].number_above(0, "a focal length in pixels > 0"),
            init[2].number(), init[3].number()};
}

} // namespace adjoint::app::detail

namespace adjoint::app {
namespace {
// The run's pixels per file pixel, across and down (1 where the scene was not loaded from a file).
std::pair<float, float> run_pixels_per_file_pixel(const Scene& s) {
    if (s.file_resolution.width == 0 || s.file_resolution.height == 0) return {1.0f, 1.0f};
    return {float(s.camera.width) / float(s.file_resolution.width),
            float(s.camera.height) / float(s.file_resolution.height)};
}
std::vector<float> scaled_intrinsics(ParameterKind kind, std::vector<float> v, float sx, float sy) {
    if (kind == ParameterKind::camera_intrinsics && v.size() == 4) v = {v[0] * sx, v[1] * sy, v[2] * sx, v[3] * sy};
    return v;
}
} // namespace

std::vector<float> value_in_file_units(const Scene& scene, ParameterKind kind, std::vector<float> value) {
    const auto [sx, sy] = run_pixels_per_file_pixel(scene);
    return scaled_intrinsics(kind, std::move(value), 1.0f / sx, 1.0f / sy);
}
std::vector<float> value_in_run_units(const Scene& scene, ParameterKind kind, std::vector<float> value) {
    const auto [sx, sy] = run_pixels_per_file_pixel(scene);
    return scaled_intrinsics(kind, std::move(value), sx, sy);
}

} // namespace adjoint::app
