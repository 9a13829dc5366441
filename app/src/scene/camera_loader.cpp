// Reading `camera` and `views`: look-at or matrix poses, fov_y or intrinsics, orbits and datasets.
#include "scene/loading.h"

#include <cmath>
#include <sstream>
#include <tuple>

namespace adjoint::app::detail {

namespace {

// `intrinsics`: {"fx", "fy", "cx", "cy"} in pixels at the camera's resolution.
Intrinsics read_intrinsics(const JsonValue& value) {
    value.expect_object({"fx", "fy", "cx", "cy"});
    Intrinsics k;
    k.fx = value.require("fx").number_above(0, "a focal length in pixels > 0");
    k.fy = value.require("fy").number_above(0, "a focal length in pixels > 0");
    k.cx = value.require("cx").number();
    k.cy = value.require("cy").number();
    return k;
}

// `matrix`: 4 rows of 4 numbers, a camera-to-world pose.
void read_matrix(const JsonValue& value, Camera& camera) {
    const char* shape = "expected a 4x4 camera-to-world matrix: a list of 4 rows of 4 numbers";
    if (!value.json().is_array() || value.array_size() != 4) value.fail(shape);
    double rows[4][4];
    for (size_t r = 0; r < 4; ++r) {
        const JsonValue row = value[r];
        if (!row.json().is_array() || row.array_size() != 4) value.fail(shape);
        for (size_t c = 0; c < 4; ++c) {
            if (!row[c].json().is_number()) value.fail(shape);
            rows[r][c] = row[c].number();
        }
    }
    if (std::string why = pose_from_matrix(rows, camera); !why.empty()) value.fail(why);
}

// The pose: `matrix`, or `eye` / `target` / `up` (a view's target and up default to the base camera's).
void read_pose(const JsonValue& value, const Camera* base, bool pose_optional, Camera& camera) {
    if (auto matrix = value.get("matrix")) {
        for (const char* key : {"eye", "target", "up"})
            if (value.has(key)) value.require(key).fail("give either matrix or eye/target/up, not both");
        read_matrix(*matrix, camera);
        return;
    }
    if (!pose_optional || value.has("eye")) camera.eye = value.require("eye").vec3();
    if ((!base && !pose_optional) || value.has("target")) camera.target = value.require("target").vec3();
    if (auto up = value.get("up")) camera.up = up->vec3();
    // camera_problem: the same tests as on values set after loading (start values, params.json).
    if (const std::string why = camera_problem(camera); !why.empty())
        (why.rfind("eye", 0) == 0 ? value.require("eye") : value.has("up") ? value.require("up") : value).fail(why);
}

} // namespace

std::string pose_from_matrix(const double (&m)[4][4], Camera& camera) {
    for (size_t c = 0; c < 4; ++c)
        if (std::abs(m[3][c] - (c == 3 ? 1.0 : 0.0)) > 1e-6) return "expected a last row of [0, 0, 0, 1]";
    // Columns X, Y, Z of the rotation: orthogonal, of one length (a uniform scale changes nothing in a
    // look-at), right-handed; the tolerance admits matrices written with a few digits.
    double col[3][3], len[3];
    for (size_t c = 0; c < 3; ++c) {
        for (size_t r = 0; r < 3; ++r) col[c][r] = m[r][c];
        len[c] = std::sqrt(col[c][0] * col[c][0] + col[c][1] * col[c][1] + col[c][2] * col[c][2]);
        if (!(len[c] > 1e-12)) return "its rotation has a zero column";
    }
    const auto dot3 = [&](size_t a, size_t b) {
        return (col[a][0] * col[b][0] + col[a][1] * col[b][1] + col[a][2] * col[b][2]) / (len[a] * len[b]);
    };
    const double det = col[0][0] * (col[1][1] * col[2][2] - col[1][2] * col[2][1]) -
                       col[1][0] * (col[0][1] * col[2][2] - col[0][2] * col[2][1]) +
                       col[2][0] * (col[0][1] * col[1][2] - col[0][2] * col[1][1]);
    const double tol = 1e-3;
    if (std::abs(dot3(0, 1)) > tol || std::abs(dot3(0, 2)) > tol || std::abs(dot3(1, 2)) > tol ||
        std::abs(len[0] / len[2] - 1) > tol || std::abs(len[1] / len[2] - 1) > tol || det <= 0)
        return "its upper 3x3 is not a rotation (orthonormal columns, determinant 1)";
    camera.eye = {float(m[0][3]), float(m[1][3]), float(m[2][3])};
    const float3 z{float(col[2][0] / len[2]), float(col[2][1] / len[2]), float(col[2][2] / len[2])};
    camera.target = camera.eye - z;
    camera.up = {float(col[1][0] / len[1]), float(col[1][1] / len[1]), float(col[1][2] / len[1])};
    return {};
}

Camera read_camera(const JsonValue& value, const Camera* base, bool pose_optional) {
    value.expect_object({"eye", "target", "up", "matrix", "fov_y", "intrinsics", "resolution", "near", "far"});
    Camera camera = base ? *base : Camera{};
    read_pose(value, base, pose_optional, camera);
    if (auto resolution = value.get("resolution")) {
        if (base) resolution->fail("views take their resolution from camera.resolution");
        const Resolution r = resolution->resolution();
        camera.width = r.width;
        camera.height = r.height;
    } else if (!base) {
        value.require("resolution");
    }
    if (auto fov = value.get("fov_y")) {
        if (value.has("intrinsics")) fov->fail("give either fov_y or intrinsics, not both");
        camera.fov_y = fov->number_above(0, "a number of degrees in [0.001, 180)");
        static_assert(kNarrowestFovDegrees == 1e-3, "the message below states it");
        if (!(camera.fov_y < 180) || camera.fov_y < kNarrowestFovDegrees)
            fov->fail("expected a number of degrees in [0.001, 180)");
        camera.intrinsics.reset();   // a view's own fov_y replaces the main camera's intrinsics
    }
    if (auto k = value.get("intrinsics")) {
        camera.intrinsics = read_intrinsics(*k);
        camera.fov_y = fov_y_of(camera.intrinsics->fy, camera.height);
        if (const std::string why = focal_problem(camera.intrinsics->fx, camera.intrinsics->fy, camera.width,
                                                  camera.height);
            !why.empty())
            k->require(why.substr(0, 2)).fail(why);
    }
    if (auto near = value.get("near")) camera.near = near->number_above(0, "a number > 0");
    if (auto far = value.get("far")) camera.far = far->number();
    if (!(camera.far > camera.near)) {
        std::ostringstream os;
        os << "expected far > near (near is " << camera.near << ", far " << camera.far << ")";
        (value.has("far") ? value.require("far") : value).fail(os.str());
    }
    return camera;
}

namespace {

std::vector<Camera> read_orbit(const JsonValue& orbit, const Camera& camera) {
    orbit.expect_object({"count", "elevation"});
    const auto count = static_cast<uint32_t>(orbit.require("count").integer(1, 4096, "an integer in [1, 4096]"));
    float lo = camera_elevation(camera), hi = lo;
    if (auto elevation = orbit.get("elevation")) {
        const char* shape = "expected [lo, hi] of degrees in (-90, 90)";
        if (!elevation->json().is_array() || elevation->array_size() != 2) elevation->fail(shape);
        for (size_t i = 0; i < 2; ++i) {
            const JsonValue e = (*elevation)[i];
            if (!e.json().is_number()) elevation->fail(shape);
            const float degrees = e.number();
            if (!(degrees > -90 && degrees < 90)) elevation->fail(shape);
            (i == 0 ? lo : hi) = degrees;
        }
    }
    return orbit_views(camera, count, lo, hi);
}

} // namespace

void read_views(const JsonValue& value, const std::filesystem::path& base_dir, Scene& scene) {
    if (value.json().is_array()) {
        if (value.array_size() == 0) value.fail("expected at least one view");
        for (size_t i = 0; i < value.array_size(); ++i) scene.views.push_back(read_camera(value[i], &scene.camera));
        return;
    }
    std::string shapes = "a list of cameras, {\"orbit\": {\"count\": N, \"elevation\": [lo, hi]}}";
    std::vector<std::string_view> keys{"orbit"};
    for (const ViewSource* source : view_sources()) {
        shapes += ", {\"" + std::string(source->key) + "\": ...}";
        keys.push_back(source->key);
        keys.insert(keys.end(), source->extra_keys.begin(), source->extra_keys.end());
    }
    if (!value.json().is_object()) value.fail("expected " + shapes);
    value.expect_object(keys);
    const ViewSource* chosen = nullptr;
    for (const ViewSource* source : view_sources())
        if (value.has(source->key)) {
            if (chosen || value.has("orbit"))
                value.fail("expected one of orbit" + [&] {
                    std::string s;
                    for (const ViewSource* v : view_sources()) s += ", " + std::string(v->key);
                    return s;
                }());
            chosen = source;
        }
    if (!chosen) {
        scene.views = read_orbit(value.require("orbit"), scene.camera);
        return;
    }
    for (std::string_view key : keys)
        if (key != chosen->key && key != "orbit" && value.has(key)) {
            bool own = false;
            for (std::string_view k : chosen->extra_keys) own = own || k == key;
            if (!own) value.require(key).fail("not a key of a " + std::string(chosen->key) + " dataset");
        }
    chosen->read(value, base_dir, scene.camera, scene.views, scene.view_images);
    if (scene.views.empty()) value.require(chosen->key).fail("the dataset has no views");
}

} // namespace adjoint::app::detail
