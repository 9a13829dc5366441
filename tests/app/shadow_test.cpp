// Shadows (`"shadows": true` on point and directional lights): the scene key, the shadowed pixels against a
// ray caster on the host, closed meshes leaking no light, flat and convex surfaces casting none on themselves, and
// the gradients of the shadowed image (light position and direction, occluder translation and vertices, antialias
// and soft) against central differences.
#include "finite_difference.h"
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace adjoint::test {

namespace {

const std::filesystem::path kAssets = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets";

app::Scene load(const std::string& text) { return app::load_scene_from_string(text, kAssets, "shadow.json"); }

// A dark box floating over a grey floor quad, seen from above and to the side, one shadowing light (no
// ambient: a shadowed floor pixel is black).
std::string box_scene(const std::string& light, const std::string& render, const std::string& optimize = "",
                      int resolution = 48) {
    const std::string res = std::to_string(resolution);
    return R"({
  "format": 1,
  "camera": { "eye": [0.4, 3.2, 2.6], "target": [0, 0, 0], "fov_y": 45, "resolution": [)" + res + ", " + res + R"(] },
  "background": [0.1, 0.1, 0.1],
  "materials": { "floor": { "albedo": [0.6, 0.6, 0.6] }, "dark": { "albedo": [0.05, 0.05, 0.05] } },
  "meshes": [
    { "name": "box", "file": "meshes/box.obj", "material": "dark", "scale": 0.6, "translation": [0, 0.6, 0],
      "rotation": { "axis": [0, 1, 0], "angle": 25 } },
    { "name": "floor", "file": "meshes/quad.obj", "material": "floor" }
  ],
  "lights": [ )" + light + R"( ],
  "render": )" + render + (optimize.empty() ? std::string() : ",\n  \"optimize\": " + optimize) + "\n}";
}

const char* kSun = R"({ "name": "sun", "type": "directional", "direction": [-0.4, -1, -0.3], "intensity": 1.5,
                        "shadows": true })";
const char* kLamp = R"({ "name": "lamp", "type": "point", "position": [0.8, 2.4, 0.6], "intensity": 6,
                         "shadows": true })";

// Whether the segment from p along d (to distance t_max) meets the triangle a b c beyond t_min
// (Möller–Trumbore, double precision).
bool hits(const float3& p, const double d[3], double t_min, double t_max, const float3& a, const float3& b,
          const float3& c) {
    const double e1[3] = {b.x - a.x, b.y - a.y, b.z - a.z}, e2[3] = {c.x - a.x, c.y - a.y, c.z - a.z};
    const double q[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
    const double det = e1[0] * q[0] + e1[1] * q[1] + e1[2] * q[2];
    if (std::fabs(det) < 1e-12) return false;
    const double s[3] = {p.x - a.x, p.y - a.y, p.z - a.z};
    const double u = (s[0] * q[0] + s[1] * q[1] + s[2] * q[2]) / det;
    const double r[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
    const double v = (d[0] * r[0] + d[1] * r[1] + d[2] * r[2]) / det;
    const double t = (e2[0] * r[0] + e2[1] * r[1] + e2[2] * r[2]) / det;
    return u >= 0 && v >= 0 && u + v <= 1 && t > t_min && t < t_max;
}

// The scene's triangles in world space, on the host.
std::vector<std::array<float3, 3>> world_triangles(const app::Scene& scene) {
    std::vector<std::array<float3, 3>> out;
    for (const app::Mesh& mesh : scene.meshes) {
        const float4x4 m = app::model_matrix(mesh.transform);
        auto world = [&](const float3& p) {
            float3 r;
            for (int i = 0; i < 3; ++i) r[i] = m[0][i] * p.x + m[1][i] * p.y + m[2][i] * p.z + m[3][i];
            return r;
        };
        for (const uint3& t : mesh.triangles)
            out.push_back({world(mesh.positions[t.x]), world(mesh.positions[t.y]), world(mesh.positions[t.z])});
    }
    return out;
}

// Per pixel: 1 where the host ray caster finds the floor point in shadow, 0 lit, -1 not the floor.
std::vector<int> host_shadows(Device& device, const app::Scene& scene) {
    const auto samples = app::rasterize_view(device, scene, 0);
    const auto tris = world_triangles(scene);
    const app::Light& light = scene.lights[0];
    std::vector<int> out(samples.size(), -1);
    for (size_t i = 0; i < samples.size(); ++i) {
        const auto& s = samples[i];
        if (!s.covered || std::fabs(s.position.y) > 1e-3f) continue;
        double d[3], t_max = 1e30;
        if (light.type == "point") {
            const double v[3] = {light.position.x - s.position.x, light.position.y - s.position.y,
                                 light.position.z - s.position.z};
            t_max = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            for (int k = 0; k < 3; ++k) d[k] = v[k] / t_max;
        } else {
            for (int k = 0; k < 3; ++k) d[k] = -double(light.direction[k]);
        }
        bool shadowed = false;
        for (const auto& t : tris) shadowed = shadowed || hits(s.position, d, 1e-4, t_max, t[0], t[1], t[2]);
        out[i] = shadowed;
    }
    return out;
}

} // namespace

class Shadows : public DeviceTest {};

TEST_F(Shadows, TheKeyIsReadAndRefusedOnLightsThatCastNone) {
    EXPECT_TRUE(load(box_scene(kSun, R"({ "visibility": "hard" })")).lights[0].shadows);
    EXPECT_FALSE(load(box_scene(R"({ "name": "sun", "type": "directional", "direction": [0, -1, 0] })",
                                R"({ "visibility": "hard" })")).lights[0].shadows);
    try {
        load(box_scene(R"({ "name": "fill", "type": "ambient", "shadows": true })", R"({ "visibility": "hard" })"));
        FAIL() << "an ambient light with shadows was accepted";
    } catch (const app::SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("shadow.json: lights[0].shadows: an ambient light casts no shadows"),
                  std::string::npos) << e.what();
    }
    try {
        load(box_scene(R"({ "name": "sun", "type": "directional", "direction": [0, -1, 0], "shadows": 1 })",
                       R"({ "visibility": "hard" })"));
        FAIL() << "shadows: 1 was accepted";
    } catch (const app::SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("lights[0].shadows: expected true or false"), std::string::npos)
            << e.what();
    }
}

// Hard visibility: the floor pixels the renderer shades black are those the host's ray caster finds in
// shadow, but for pixels within one pixel of the shadow's boundary; a directional and a point light.
TEST_F(Shadows, ShadowedPixelsMatchAHostRayCaster) {
    for (const char* light : {kSun, kLamp}) {
        const app::Scene scene = load(box_scene(light, R"({ "visibility": "hard" })", "", 64));
        const std::vector<int> host = host_shadows(device, scene);
        app::SceneRenderer renderer(device, scene);
        const app::LinearImage img = renderer.render(0);
        const int n = 64;
        int shadowed = 0, lit = 0, disagree = 0, near_boundary = 0;
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) {
                const int h = host[size_t(y) * n + x];
                if (h < 0) continue;
                const bool dark = img.texels[size_t(y) * n + x].x < 1e-3f;
                shadowed += h == 1, lit += h == 0;
                if (dark == bool(h)) continue;
                bool boundary = false;   // a neighbour the host classifies otherwise
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        const int xx = x + dx, yy = y + dy;
                        if (xx < 0 || yy < 0 || xx >= n || yy >= n) continue;
                        const int o = host[size_t(yy) * n + xx];
                        boundary = boundary || (o >= 0 && o != h);
                    }
                (boundary ? near_boundary : disagree)++;
            }
        EXPECT_GT(shadowed, 50) << light;
        EXPECT_GT(lit, 500) << light;
        EXPECT_EQ(disagree, 0) << light << " (" << near_boundary << " differ beside the boundary)";
        EXPECT_LT(near_boundary, shadowed / 4) << light;
    }
}

// A point light's occluders that reach past it, in every mode: a lamp inside a closed box darkens every floor
// pixel, and a wall reaching past a lamp beside it darkens the floor behind it. Their triangles have a corner
// beyond the plane through the lamp across the ray, which projects mirrored through the lamp: they were
// dropped, and 282 of 864 floor pixels around the box and 466 of 510 behind the wall were lit. Every mode is
// black inside the host ray caster's shadow, and hard is lit outside it, two pixels from its boundary.
TEST_F(Shadows, OccludersReachingPastAPointLightStillShadow) {
    const int n = 48;
    const std::string lamp_in_box = R"(
    { "name": "box", "file": "meshes/box.obj", "material": "dark", "scale": 0.5, "translation": [0, 1, 0] },)";
    const std::string wall = R"(
    { "name": "wall", "file": "meshes/quad.obj", "material": "dark", "translation": [0.5, 0, 0],
      "rotation": { "axis": [0, 0, 1], "angle": 90 } },)";
    for (const auto& [occluder, lamp] : {std::pair{lamp_in_box, "[0, 1, 0]"}, std::pair{wall, "[1, 0.5, 0]"}})
        for (const char* render : {R"({ "visibility": "hard" })", R"({ "visibility": "antialias" })",
                                   R"({ "visibility": "soft", "soft": { "sigma": 1e-5, "gamma": 1e-4 } })"}) {
            const app::Scene scene = load(R"({
  "format": 1,
  "camera": { "eye": [0, 5, 0.01], "target": [0, 0, 0], "fov_y": 45, "resolution": [48, 48] },
  "materials": { "floor": { "albedo": [0.5, 0.5, 0.5] }, "dark": { "albedo": [0.2, 0.2, 0.2] } },
  "meshes": [)" + occluder + R"(
    { "name": "floor", "file": "meshes/quad.obj", "material": "floor" } ],
  "lights": [ { "name": "lamp", "type": "point", "position": )" + std::string(lamp) +
                                          R"(, "intensity": 2, "shadows": true } ],
  "render": )" + render + "\n}");
            const std::vector<int> host = host_shadows(device, scene);
            const app::LinearImage img = app::SceneRenderer(device, scene).render(0);
            const bool hard = std::string(render).find("hard") != std::string::npos;
            int shadowed = 0, wrong = 0;
            // Each pixel with those within two of it (soft blends the wall's lit side, edge-on, into the floor
            // beside it).
            for (int y = 2; y < n - 2; ++y)
                for (int x = 2; x < n - 2; ++x) {
                    bool all = true, any = false;
                    for (int dy = -2; dy <= 2; ++dy)
                        for (int dx = -2; dx <= 2; ++dx) {
                            const int h = host[size_t(y + dy) * n + x + dx];
                            all = all && h == 1;
                            any = any || h == 1;
                        }
                    const float lit = img.texels[size_t(y) * n + x].x;
                    const int h = host[size_t(y) * n + x];
                    shadowed += all;
                    if (all && !(lit < 1e-6f)) ++wrong;                     // lit inside the shadow
                    if (hard && h == 0 && !any && !(lit > 1e-3f)) ++wrong;   // dark away from the shadow
                }
            EXPECT_GT(shadowed, 200) << lamp << " " << render;
            EXPECT_EQ(wrong, 0) << lamp << " " << render;
        }
}

// A closed mesh lets no light through its shared edges: inside the box's shadow (where the host's ray caster
// finds the pixel and its 8 neighbours shadowed) the floor is black in every visibility mode, though the rays
// there cross the diagonal edges of the box's faces.
TEST_F(Shadows, ClosedMeshesLeakNoLight) {
    const int n = 96;
    for (const char* render : {R"({ "visibility": "hard" })", R"({ "visibility": "antialias" })",
                               R"({ "visibility": "soft", "soft": { "sigma": 1e-4, "gamma": 1e-4 } })"}) {
        const app::Scene scene = load(box_scene(kSun, render, "", n));
        const std::vector<int> host = host_shadows(device, scene);
        app::SceneRenderer renderer(device, scene);
        const app::LinearImage img = renderer.render(0);
        int deep = 0;
        float brightest = 0;
        for (int y = 1; y < n - 1; ++y)
            for (int x = 1; x < n - 1; ++x) {
                bool all = true;
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) all = all && host[size_t(y + dy) * n + x + dx] == 1;
                if (!all) continue;
                ++deep;
                const float4 t = img.texels[size_t(y) * n + x];
                brightest = std::max(brightest, std::max(t.x, std::max(t.y, t.z)));
            }
        EXPECT_GT(deep, 40) << render;
        EXPECT_LT(brightest, 1e-6f) << render;
    }
}

// A flat surface does not shadow itself: the floor quad alone (two triangles sharing a diagonal) under a low
// sun and a point light renders the same with shadows as without, in antialias and soft (hard has no band).
// The soft band of the triangle beside a point is weighed by that triangle's height along the ray where the ray
// meets its plane (0 here); the height at the outline's point nearest to the point, which is up to a pixel's
// width away on the floor, darkened a line along the diagonal (0.43 of the colour at 64x64). Under a low point
// light the height was interpolated with the central projection's barycentrics, which are not the plane's: the
// floor's other triangle stood above it by a few bias and darkened streaks by up to 99% (143 pixels).
TEST_F(Shadows, AFlatSurfaceCastsNoShadowOnItself) {
    const int n = 64;
    auto scene = [&](const char* render, bool shadows) {
        const std::string on = shadows ? "true" : "false";
        return load(R"({
  "format": 1,
  "camera": { "eye": [0.3, 3.6, 2.4], "target": [0, 0, 0], "fov_y": 50, "resolution": [64, 64] },
  "materials": { "floor": { "albedo": [0.6, 0.6, 0.6] } },
  "meshes": [ { "name": "floor", "file": "meshes/quad.obj", "material": "floor" } ],
  "lights": [ { "name": "sun", "type": "directional", "direction": [-0.5, -0.6, -0.35], "intensity": 1.2,
                "shadows": )" + on + R"( },
              { "name": "lamp", "type": "point", "position": [1.5, 0.8, -1], "intensity": 3, "shadows": )" +
                    on + R"( },
              { "name": "low", "type": "point", "position": [3, 0.2, 1], "intensity": 9, "shadows": )" + on + R"( },
              { "name": "lower", "type": "point", "position": [0, 0.5, -2.5], "intensity": 6, "shadows": )" +
                    on + R"( } ],
  "render": )" + render + "\n}");
    };
    for (const char* render : {R"({ "visibility": "antialias" })",
                               R"({ "visibility": "soft", "soft": { "sigma": 1e-4, "gamma": 1e-4 } })"}) {
        app::SceneRenderer with(device, scene(render, true)), without(device, scene(render, false));
        const app::LinearImage a = with.render(0), b = without.render(0);
        float worst = 0;
        for (int i = 0; i < n * n; ++i)
            for (int c = 0; c < 3; ++c) worst = std::max(worst, std::fabs(a.texels[i][c] - b.texels[i][c]));
        EXPECT_LT(worst, 1e-5f) << render;
    }
}

// A sphere's lit side under its own shadowing light: nothing stands between it and the light, so it is lit as
// without shadows. In antialias the band of each neighbouring face, which rises above the point by its distance
// times the small angle between the faces, darkened it as far as a pixel reaches: at 16x16 the centre read 137
// for 195 (32x32: 176 for 196).
TEST_F(Shadows, AConvexSurfaceCastsNoShadowOnItsLitSide) {
    for (const int n : {16, 32}) {
        auto scene = [&](const char* render, bool shadows) {
            return load(R"({
  "format": 1,
  "camera": { "eye": [0, 0, 3], "target": [0, 0, 0], "fov_y": 40, "resolution": [)" + std::to_string(n) + ", " +
                        std::to_string(n) + R"(] },
  "materials": { "m": { "albedo": [0.8, 0.5, 0.3] } },
  "meshes": [ { "name": "ball", "file": "meshes/uv_sphere.obj", "material": "m" } ],
  "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14, "shadows": )" +
                        std::string(shadows ? "true" : "false") + R"( } ],
  "render": )" + render + "\n}");
        };
        // Soft at SoftRas's gamma: at the format's 0.1 the sphere's far side, in its own shadow, shows through.
        for (const char* render : {R"({ "visibility": "antialias" })",
                                   R"({ "visibility": "soft", "soft": { "sigma": 1e-4, "gamma": 1e-4 } })"}) {
            app::SceneRenderer with(device, scene(render, true)), without(device, scene(render, false));
            const app::LinearImage a = with.render(0), b = without.render(0);
            // The pixels lit at more than half the brightest's value, away from the terminator.
            float brightest = 0;
            for (const float4& t : b.texels) brightest = std::max(brightest, t.x);
            int lit = 0;
            float worst = 0;
            for (size_t i = 0; i < b.texels.size(); ++i)
                if (b.texels[i].x > 0.5f * brightest) {
                    ++lit;
                    worst = std::max(worst, std::fabs(a.texels[i].x - b.texels[i].x));
                }
            EXPECT_GT(lit, n * n / 20) << n << " " << render;
            EXPECT_LT(worst, 1e-5f) << n << " " << render;
        }
    }
}

// Convex meshes alone under shadowing lights, lit as without shadows: a box's faces under a steep sun and a lamp,
// the same box with smoothed normals (its OBJ without them) and a smooth sphere under a sun straight above. A
// convex edge's other face meets the lit face's plane at the edge, so nothing stands between the face and the
// light. Measured from the point (where the other face's plane stands far above it along a steep ray) instead of
// from the face's own plane, the other face's band darkened the lit faces along the box's top edges: 208 for 154
// at 64x64 in antialias, 208 for 194 in soft (tester). Measured from the plane of the interpolated normal, which
// tilts away from the face's, the smooth box's edges kept their seams (63 pixels darker by more than 10/255 in
// antialias) and the sphere a dark ring inside its terminator (113 pixels). Compared away from the outlines.
TEST_F(Shadows, ConvexMeshesCastNoShadowOnTheirLitFaces) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("adjoint-shadow-smooth-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ifstream in(kAssets / "meshes" / "box.obj");
        std::ofstream out(dir / "smooth_box.obj");
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("vn ", 0) == 0) continue;
            for (size_t at; (at = line.find("//")) != std::string::npos;)
                line.erase(at, line.find_first_of(' ', at) == std::string::npos ? std::string::npos
                                                                                 : line.find_first_of(' ', at) - at);
            out << line << "\n";
        }
    }
    struct Case {
        std::string mesh, camera, light;
    };
    const std::string box_camera = R"("eye": [0, 1.5, 3.3], "target": [0, 0, 0], "fov_y": 40)";
    const std::vector<Case> cases = {
        {R"("file": "meshes/box.obj", "scale": 0.5, "rotation": { "axis": [0, 1, 0], "angle": 30 })", box_camera,
         R"({ "name": "sun", "type": "directional", "direction": [-0.3, -1, -0.4])"},
        {R"("file": "meshes/box.obj", "scale": 0.5, "rotation": { "axis": [0, 1, 0], "angle": 30 })", box_camera,
         R"({ "name": "lamp", "type": "point", "position": [1, 2, 1], "intensity": 3)"},
        {R"("file": ")" + (dir / "smooth_box.obj").string() + "\"",
         R"("eye": [1.6, 1.8, 2.6], "target": [0, 0, 0], "fov_y": 35)",
         R"({ "name": "sun", "type": "directional", "direction": [-1, -1, -0.5])"},
        {R"("file": "meshes/uv_sphere.obj", "scale": 0.8)", box_camera,
         R"({ "name": "sun", "type": "directional", "direction": [0, -1, 0])"}};
    auto scene = [&](const Case& c, const char* render, bool shadows) {
        return load(R"({
  "format": 1,
  "camera": { )" + c.camera + R"(, "resolution": [64, 64] },
  "materials": { "m": { "albedo": [0.85, 0.45, 0.2] } },
  "meshes": [ { "name": "o", "material": "m", )" + c.mesh + R"( } ],
  "lights": [ { "name": "fill", "type": "ambient", "intensity": 0.3 }, )" + c.light +
                    (shadows ? R"(, "shadows": true })" : " }") + R"( ],
  "render": )" + render + "\n}");
    };
    const char* antialias = R"({ "visibility": "antialias" })";
    for (const Case& c : cases) {
        // Away from the outline (two pixels in from the antialiased silhouette): at a silhouette, soft blends in the
        // back faces that meet the front there, and a smooth box's back faces, lit as their interpolated normals
        // say, are in their own shadow.
        const app::LinearImage outline = app::SceneRenderer(device, scene(c, antialias, false)).render(0);
        auto interior = [&](int x, int y) {
            for (int dy = -2; dy <= 2; ++dy)
                for (int dx = -2; dx <= 2; ++dx) {
                    const int u = x + dx, v = y + dy;
                    if (u < 0 || v < 0 || u >= 64 || v >= 64 || outline.texels[v * 64 + u].w < 0.999f) return false;
                }
            return true;
        };
        const char* soft = R"({ "visibility": "soft", "soft": { "sigma": 1e-4, "gamma": 1e-5 } })";
        for (const char* render : {antialias, soft}) {
            app::SceneRenderer with(device, scene(c, render, true)), without(device, scene(c, render, false));
            const app::LinearImage a = with.render(0), b = without.render(0);
            float worst = 0;
            int covered = 0;
            for (int y = 0; y < 64; ++y)
                for (int x = 0; x < 64; ++x) {
                    if (!interior(x, y)) continue;
                    ++covered;
                    const float4 &p = a.texels[y * 64 + x], &q = b.texels[y * 64 + x];
                    for (int k = 0; k < 3; ++k) worst = std::max(worst, std::fabs(p[k] - q[k]));
                }
            EXPECT_GT(covered, 100) << c.mesh << " " << c.light << " " << render;
            EXPECT_LT(worst, 1e-5f) << c.mesh << " " << c.light << " " << render;
        }
    }
    std::filesystem::remove_all(dir);
}

// The box high over the floor, above a camera that looks down at its shadow: the camera sees the floor alone,
// so the image changes with the box only through its shadow (the box's own silhouette, antialiased, has
// events of its own: tests of its own).
std::string shadow_only_scene(const std::string& light, const std::string& render, const std::string& optimize) {
    return R"({
  "format": 1,
  "camera": { "eye": [-0.6, 1.5, -0.45], "target": [-0.6, 0, -0.46], "fov_y": 70, "resolution": [40, 40] },
  "background": [0.1, 0.1, 0.1],
  "materials": { "floor": { "albedo": [0.6, 0.6, 0.6] }, "dark": { "albedo": [0.05, 0.05, 0.05] } },
  "meshes": [
    { "name": "box", "file": "meshes/box.obj", "material": "dark", "scale": 0.6, "translation": [0, 2, 0],
      "rotation": { "axis": [0.2, 1, 0.1], "angle": 25 } },
    { "name": "floor", "file": "meshes/quad.obj", "material": "floor" }
  ],
  "lights": [ )" + light + R"( ],
  "render": )" + render + R"(,
  "optimize": )" + optimize + "\n}";
}

const char* kHighLamp = R"({ "name": "lamp", "type": "point", "position": [0.4, 3.6, 0.3], "intensity": 20,
                             "shadows": true })";

// The gradients of the shadowed image's loss from $autodiff against central differences: the light's
// direction (sun) or position (lamp), the box's translation and its vertices (the six floats with the largest
// gradients), in antialias and soft visibility. The steps (3e-4) move the shadow's boundary by about a hundredth of
// a pixel, well inside its soft band (one pixel in antialias, two in soft with sigma 1e-3), and cross no
// other event.
TEST_F(Shadows, GradientsMatchCentralDifferences) {
    struct Case { const char* light; const char* vector; };
    const Case cases[] = {{kSun, R"("lights.sun.direction": { "init": [-0.45, -1, -0.25] })"},
                          {kHighLamp, R"("lights.lamp.position": { "init": [0.45, 3.55, 0.35] })"}};
    for (const char* render : {R"({ "visibility": "antialias" })",
                               R"({ "visibility": "soft", "soft": { "sigma": 1e-3, "gamma": 1e-2 } })"})
        for (const Case& c : cases) {
            const std::string optimize = R"({ "target": "scene", "parameters": { )" + std::string(c.vector) + R"(,
                "meshes.box.translation": { "init": [0.02, 2.02, -0.01] },
                "meshes.box.vertices": { "perturb": 0.01 } } })";
            app::Optimizer opt(device, load(shadow_only_scene(c.light, render, optimize)));
            std::vector<float> g;
            ASSERT_GT(opt.evaluate(&g), 0.0);
            const std::vector<float> x0 = opt.free_values();
            ASSERT_EQ(g.size(), 3u + 3u + 8u * 3u);
            std::vector<size_t> check = {0, 1, 2, 3, 4, 5};
            std::vector<size_t> vertices;
            for (size_t i = 6; i < x0.size(); ++i) vertices.push_back(i);
            std::partial_sort(vertices.begin(), vertices.begin() + 6, vertices.end(),
                              [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
            check.insert(check.end(), vertices.begin(), vertices.begin() + 6);
            int nonzero = 0;
            for (size_t i : check) {
                const double fd = central_difference(opt, x0, i, 3e-4);
                EXPECT_NEAR(g[i], fd, 3e-2 * std::max(std::fabs(fd), std::fabs(double(g[i]))) + 1e-6)
                    << render << " " << c.vector << " float " << i << " value " << x0[i];
                nonzero += std::fabs(fd) > 1e-5;
            }
            EXPECT_GE(nonzero, int(check.size()) - 1) << render << " " << c.vector;
        }
}

} // namespace adjoint::test
