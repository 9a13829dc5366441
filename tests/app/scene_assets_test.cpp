// The demo assets (assets/, made by tools/make_assets.py) load, and their windings agree with their normals.
#include <adjoint/app/scene.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace adjoint::app::test {
namespace {

TEST(SceneAssets, LoadWithConsistentWindingAndTheirSizes) {
    const nlohmann::json scene = nlohmann::json::parse(R"({
      "format": 1,
      "camera": { "eye": [0, 1, 4], "target": [0, 0, 0], "resolution": [64, 64] },
      "materials": { "check": { "albedo_texture": "textures/colourful_128.png" },
                     "fine":  { "albedo_texture": "textures/colourful_256.png" },
                     "grey":  { "albedo": [0.5, 0.5, 0.5] } },
      "meshes": [
        { "name": "sphere", "file": "meshes/uv_sphere.obj", "material": "check" },
        { "name": "ico", "file": "meshes/ico_sphere.obj", "material": "grey", "vertex_colors": true },
        { "name": "ground", "file": "meshes/plane.obj", "material": "fine" },
        { "name": "knot", "file": "meshes/torus_knot.obj", "material": "check" }
      ]
    })");
    const Scene s = load_scene_from_string(scene.dump(), ADJOINT_SOURCE_DIR "/assets", "assets.json");
    EXPECT_EQ(s.textures[0].width, 128u);
    EXPECT_EQ(s.textures[0].height, 128u);
    EXPECT_EQ(s.textures[1].width, 256u);

    const size_t triangles[] = {64 * 32 * 2 - 2 * 64, 1280, 200, 256 * 10 * 2};
    const size_t positions[] = {64 * 31 + 2, 642, 121, 2560};
    for (size_t m = 0; m < s.meshes.size(); ++m) {
        const Mesh& mesh = s.meshes[m];
        SCOPED_TRACE(mesh.file);
        EXPECT_EQ(mesh.triangles.size(), triangles[m]);
        EXPECT_EQ(mesh.obj_positions.size(), positions[m]);
        EXPECT_FALSE(mesh.normals_computed);
        EXPECT_EQ(mesh.has_texcoords, m != 1);
        EXPECT_EQ(mesh.has_colors, m == 1);
        size_t disagree = 0;
        for (const uint3& t : mesh.triangles) {
            const float3 a = mesh.positions[t.x], b = mesh.positions[t.y], c = mesh.positions[t.z];
            const float3 e1(b.x - a.x, b.y - a.y, b.z - a.z), e2(c.x - a.x, c.y - a.y, c.z - a.z);
            const float3 g(e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x);
            for (uint32_t v : {t.x, t.y, t.z}) {
                const float3 n = mesh.normals[v];
                if (!(g.x * n.x + g.y * n.y + g.z * n.z > 0)) ++disagree;
            }
        }
        EXPECT_EQ(disagree, 0u);
    }
}

} // namespace
} // namespace adjoint::app::test
