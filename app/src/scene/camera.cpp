// Cameras: the view and projection matrices, the orbit expansion of `views`, and resolutions (--resolution).
#include "scene/loading.h"
#include <cmath>
#include <iomanip>
#include <numbers>
#include <sstream>
#include <tuple>

namespace adjoint::app {

using detail::BoundingBox;
using detail::cross;
using detail::dot;
using detail::normalize;
using detail::operator-;
using detail::operator+;
using detail::operator*;

namespace {
constexpr double degrees_to_radians = std::numbers::pi / 180.0;

float4x4 multiply(const float4x4& a, const float4x4& b) {
    float4x4 m;
    for (size_t c = 0; c < 4; ++c)
        for (size_t r = 0; r < 4; ++r) {
            float s = 0;
            for (size_t k = 0; k < 4; ++k) s += a[k][r] * b[c][k];
            m[c][r] = s;
        }
    return m;
}
} // namespace

float4x4 view_matrix(const Camera& camera) {
    const float3 f = normalize(camera.target - camera.eye);
    const float3 s = normalize(cross(f, camera.up));
    const float3 u = cross(s, f);
    float4x4 m = float4x4::identity();
    for (size_t c = 0; c < 3; ++c) m[c] = float4(s[c], u[c], -f[c], 0);
    m[3] = float4(-dot(s, camera.eye), -dot(u, camera.eye), dot(f, camera.eye), 1);
    return m;
}

float4x4 projection_matrix(const Camera& camera) {
    const float w = static_cast<float>(camera.width), h = static_cast<float>(camera.height);
    const float n = camera.near, f = camera.far;
    // Clip x = sx·x + ox·(−z) gives pixel column (ndc + 1)·w/2 = w/2·(1 + ox) + w/2·sx·x/(−z) = cx + fx·x/(−z),
    // so sx = 2fx/w and ox = 2cx/w − 1; rows grow downwards, so oy = 1 − 2cy/h. fov_y alone: centred, fx = fy.
    float sx, sy, ox = 0, oy = 0;
    if (const auto& k = camera.intrinsics) {
        sx = 2 * k->fx / w;
        sy = 2 * k->fy / h;
        ox = 2 * k->cx / w - 1;
        oy = 1 - 2 * k->cy / h;
    } else {
        sy = static_cast<float>(1.0 / std::tan(0.5 * camera.fov_y * degrees_to_radians));
        sx = sy * h / w;
    }
    float4x4 m;
    m[0] = float4(sx, 0, 0, 0);
    m[1] = float4(0, sy, 0, 0);
    m[2] = float4(-ox, -oy, (f + n) / (n - f), -1);
    m[3] = float4(0, 0, 2 * f * n / (n - f), 0);
    return m;
}

float fov_y_of(float fy, uint32_t height) {
    return static_cast<float>(2.0 * std::atan(0.5 * height / fy) / degrees_to_radians);
}

void set_resolution(Camera& camera, Resolution resolution) {
    if (auto& k = camera.intrinsics; k && camera.width > 0 && camera.height > 0) {
        const float sx = static_cast<float>(resolution.width) / static_cast<float>(camera.width);
        const float sy = static_cast<float>(resolution.height) / static_cast<float>(camera.height);
        *k = {k->fx * sx, k->fy * sy, k->cx * sx, k->cy * sy};
        camera.fov_y = fov_y_of(k->fy, resolution.height);
    }
    camera.width = resolution.width;
    camera.height = resolution.height;
}

float4x4 view_projection_matrix(const Camera& camera) {
    return multiply(projection_matrix(camera), view_matrix(camera));
}

std::string camera_problem(const Camera& c) {
    const double f[3] = {double(c.target.x) - c.eye.x, double(c.target.y) - c.eye.y, double(c.target.z) - c.eye.z};
    const double u[3] = {c.up.x, c.up.y, c.up.z};
    const double x[3] = {f[1] * u[2] - f[2] * u[1], f[2] * u[0] - f[0] * u[2], f[0] * u[1] - f[1] * u[0]};
    auto norm = [](const double (&a)[3]) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); };
    if (!(norm(f) > 0)) return "eye and target are the same point";
    if (!(norm(x) >= 1e-6 * norm(f) * norm(u))) return "up is zero or parallel to the viewing direction";
    if (c.intrinsics) return focal_problem(c.intrinsics->fx, c.intrinsics->fy, c.width, c.height);
    return "";
}

float longest_focal(uint32_t side) {
    const double limit = side / (2 * std::tan(0.5 * kNarrowestFovDegrees * degrees_to_radians));
    const float f = float(limit);
    return double(f) > limit ? std::nextafter(f, 0.0f) : f;
}

std::vector<Parameter::Run> intrinsics_ranges(const Camera& camera) {
    return {{"fx", 1, kShortestFocal, longest_focal(camera.width)},
            {"fy", 1, kShortestFocal, longest_focal(camera.height)},
            {"cx and cy", 2, -INFINITY, INFINITY}};
}

std::string focal_problem(double fx, double fy, uint32_t width, uint32_t height) {
    // The shortest text that reads back as the float: a value just past a limit is not shown equal to it.
    const auto text = [](double x) { return detail::number_text(float(x)); };
    // As floats, as a view keeps them: COLMAP's double 0.001 lies below the float 0.001 the limit is.
    for (const auto& [key, focal, side] : {std::tuple{"fx", float(fx), width}, std::tuple{"fy", float(fy), height}}) {
        if (!(focal >= kShortestFocal) || !std::isfinite(focal))
            return std::string(key) + " is " + text(focal) + ": expected a finite focal length of at least " +
                   text(kShortestFocal) + " pixels";
        if (side > 0 && focal > longest_focal(side))
            return std::string(key) + " is " + text(focal) + " pixels, above " + text(longest_focal(side)) +
                   ": a field of view narrower than " + text(kNarrowestFovDegrees) + " degrees across " +
                   std::to_string(side) + " pixels";
    }
    return "";
}

std::string out_of_view(const Mesh& mesh, const Camera& view) {
    if (mesh.positions.empty()) return "";
    BoundingBox box;
    box.add(mesh.positions);
    const float3 lo = box.lo, hi = box.hi;
    const float4x4 m = multiply(view_projection_matrix(view), model_matrix(mesh.transform));
    // In clip space the frustum is -w <= x, y, z <= w: the box is outside when all 8 corners are beyond one of
    // its 6 planes (a box across an edge of the frustum may still miss it: then the mesh is taken as showing).
    uint32_t beyond[6] = {};
    float nearest = INFINITY;   // the smallest w: the depth along the view
    bool all_behind = true;
    for (uint32_t c = 0; c < 8; ++c) {
        const float3 p(c & 1 ? hi[0] : lo[0], c & 2 ? hi[1] : lo[1], c & 4 ? hi[2] : lo[2]);
        float q[4];
        for (size_t r = 0; r < 4; ++r) q[r] = detail::transformed(m, p, r);
        for (size_t a = 0; a < 3; ++a) {
            beyond[2 * a] += q[a] < -q[3];
            beyond[2 * a + 1] += q[a] > q[3];
        }
        nearest = std::fmin(nearest, q[3]);
        all_behind = all_behind && q[3] <= 0;
    }
    std::ostringstream why;
    if (beyond[5] == 8)
        why << "beyond camera.far (" << view.far << "): its nearest corner is " << std::setprecision(4) << nearest
            << " along the view (raise camera.far)";
    else if (beyond[4] == 8 && all_behind)
        why << "behind the camera";
    // Beside the view before nearer than near: a mesh level with the eye, off to one side, is both, and
    // lowering camera.near (as the message said) left it outside the field of view.
    else if (beyond[0] == 8 || beyond[1] == 8 || beyond[2] == 8 || beyond[3] == 8)
        why << "outside the field of view";
    else if (beyond[4] == 8)
        why << "nearer than camera.near (" << view.near << "; lower it)";
    return why.str();
}

size_t triangles_across_the_eye(const Mesh& mesh, const Camera& view) {
    const float4x4 m = multiply(view_projection_matrix(view), model_matrix(mesh.transform));
    // Clip w is the depth along the view: a corner at w <= 1e-6 is behind the camera's plane (render/raster.h's
    // projective_w), and a triangle wholly nearer than the near plane shows nothing anyway.
    std::vector<float> w(mesh.positions.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = detail::transformed(m, mesh.positions[i], 3);
    size_t n = 0;
    for (const uint3& t : mesh.triangles) {
        const float a = w[t[0]], b = w[t[1]], c = w[t[2]];
        n += std::fmin(a, std::fmin(b, c)) <= 1e-6f && std::fmax(a, std::fmax(b, c)) > view.near;
    }
    return n;
}

namespace detail {

float camera_elevation(const Camera& camera) {
    const float3 d = normalize(camera.eye - camera.target);
    const float s = std::fmax(-1.0f, std::fmin(1.0f, dot(d, normalize(camera.up))));
    return static_cast<float>(std::asin(s) / degrees_to_radians);
}

std::vector<Camera> orbit_views(const Camera& camera, uint32_t count, float lo, float hi) {
    const float3 up = normalize(camera.up);
    const float3 offset = camera.eye - camera.target;
    const float distance = length(offset);
    // The camera's azimuth is the start: h0 is its horizontal direction, side completes the frame
    // (counter-clockwise seen from above). The loader has checked that the camera does not look along up.
    const float3 h0 = normalize(offset - up * dot(offset, up));
    const float3 side = cross(up, h0);
    std::vector<Camera> views;
    for (uint32_t i = 0; i < count; ++i) {
        const double azimuth = 2.0 * std::numbers::pi * i / count;
        const double elevation =
            (count == 1 ? 0.5 * (lo + hi) : lo + (hi - lo) * static_cast<double>(i) / (count - 1)) * degrees_to_radians;
        const float ch = static_cast<float>(std::cos(elevation));
        const float3 dir = h0 * (ch * static_cast<float>(std::cos(azimuth))) +
                           side * (ch * static_cast<float>(std::sin(azimuth))) +
                           up * static_cast<float>(std::sin(elevation));
        Camera view = camera;
        view.eye = camera.target + dir * distance;
        views.push_back(view);
    }
    return views;
}

} // namespace detail

Resolution parse_resolution(std::string_view text) {
    const auto bad = [&] {
        std::ostringstream os;
        os << "expected WxH with each side in 1.." << max_resolution << ", got \"" << text << "\"";
        throw SceneError("", "--resolution", os.str());
    };
    const size_t x = text.find('x');
    if (x == std::string_view::npos) bad();
    uint64_t side[2] = {0, 0};
    const std::string_view parts[2] = {text.substr(0, x), text.substr(x + 1)};
    for (size_t i = 0; i < 2; ++i) {
        if (parts[i].empty() || parts[i].size() > 5) bad();
        for (char c : parts[i]) {
            if (c < '0' || c > '9') bad();
            side[i] = side[i] * 10 + static_cast<uint64_t>(c - '0');
        }
        if (side[i] == 0 || side[i] > max_resolution) bad();
    }
    return {static_cast<uint32_t>(side[0]), static_cast<uint32_t>(side[1])};
}

void check_resolution(Resolution r) {
    if (r.width == 0 || r.height == 0 || r.width > max_resolution || r.height > max_resolution)
        throw SceneError("", "resolution", "expected each side in 1.." + std::to_string(max_resolution) + ", got " +
                                               std::to_string(r.width) + "x" + std::to_string(r.height));
}

} // namespace adjoint::app
