// glTF 2.0 meshes: files written here (data-URI buffers, .glb) read into the expected mesh (attributes of every
// component type, node transforms, strips and fans), Debian's glTF samples, "material": "gltf" as pbr
// materials, broken files refused naming what is wrong, and a glTF cube rendering as its OBJ twin does.
#include "app/scene_fixture.h"
#include "support/device_fixture.h"

#include <adjoint/app/image_io.h>
#include <adjoint/app/renderer.h>

#include <cstring>
#include <functional>

namespace adjoint::app::test {

namespace {

const std::filesystem::path kSamples = "/usr/share/assimp/models/glTF2";

std::string base64(const std::string& bytes) {
    static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
        if (i + 1 < bytes.size()) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
        if (i + 2 < bytes.size()) v |= uint32_t(uint8_t(bytes[i + 2]));
        out += digits[(v >> 18) & 63];
        out += digits[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? digits[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? digits[v & 63] : '=';
    }
    return out;
}

// A glTF written by hand: one buffer of tightly packed views, accessors over them.
struct Gltf {
    Json json = Json::parse(R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [],
                               "meshes": [], "accessors": [], "bufferViews": []})");
    std::string bin;

    template <typename T>
    int accessor(const std::vector<T>& data, int component_type, const char* type, size_t count, bool normalized = false) {
        while (bin.size() % 4) bin += '\0';
        json["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", bin.size()}, {"byteLength", data.size() * sizeof(T)}});
        bin.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
        Json a = {{"bufferView", json["bufferViews"].size() - 1}, {"componentType", component_type}, {"count", count},
                  {"type", type}};
        if (normalized) a["normalized"] = true;
        json["accessors"].push_back(a);
        return int(json["accessors"].size() - 1);
    }
    int floats(const std::vector<float>& data, const char* type, size_t count) { return accessor(data, 5126, type, count); }

    std::string text() const {
        Json j = json;
        j["buffers"] = {{{"byteLength", bin.size()}, {"uri", "data:application/octet-stream;base64," + base64(bin)}}};
        return j.dump();
    }
    std::string glb() const {
        Json j = json;
        j["buffers"] = {{{"byteLength", bin.size()}}};
        std::string chunk = j.dump(), data = bin;
        while (chunk.size() % 4) chunk += ' ';
        while (data.size() % 4) data += '\0';
        std::string out = "glTF";
        const auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
        u32(2), u32(uint32_t(12 + 8 + chunk.size() + 8 + data.size()));
        u32(uint32_t(chunk.size())), u32(0x4E4F534Au), out += chunk;
        u32(uint32_t(data.size())), u32(0x004E4942u), out += data;
        return out;
    }
};

// A unit quad in the xy plane facing +z, its 4 vertices with normals, normalized unsigned-short texture
// coordinates and normalized unsigned-byte RGBA colours, two indexed triangles; under a parent node
// translated by (1, 2, 3) and a child scaled by 2.
Gltf quad() {
    Gltf g;
    const int position = g.floats({0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, "VEC3", 4);
    const int normal = g.floats({0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1}, "VEC3", 4);
    const int uv = g.accessor(std::vector<uint16_t>{0, 65535, 65535, 65535, 65535, 0, 0, 32768}, 5123, "VEC2", 4, true);
    const int color = g.accessor(std::vector<uint8_t>{255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 51, 102, 153, 128},
                                 5121, "VEC4", 4, true);
    const int indices = g.accessor(std::vector<uint16_t>{0, 1, 2, 0, 2, 3}, 5123, "SCALAR", 6);
    g.json["meshes"].push_back({{"primitives", {{{"attributes", {{"POSITION", position}, {"NORMAL", normal},
                                                                 {"TEXCOORD_0", uv}, {"COLOR_0", color}}},
                                                 {"indices", indices}}}}});
    g.json["nodes"] = Json::parse(R"([{"translation": [1, 2, 3], "children": [1]}, {"scale": [2, 2, 2], "mesh": 0}])");
    return g;
}

} // namespace

class GltfMeshes : public SceneFiles {
protected:
    Scene load_gltf(const std::string& relative, const std::string& bytes, const char* material = "base") {
        write(relative, bytes);
        return load(scene_for(relative, material));
    }
    Json scene_for(const std::string& file, const char* material = "base") {
        Json j = minimal_scene();
        j["meshes"][0]["file"] = file;
        j["meshes"][0]["material"] = material;
        return j;
    }
    std::string error_of_gltf(const std::string& bytes, const std::string& relative = "meshes/bad.gltf") {
        write(relative, bytes);
        return error_of(scene_for(relative));
    }
};

TEST_F(GltfMeshes, AttributesAndNodeTransformsAreRead) {
    const Mesh m = load_gltf("meshes/quad.gltf", quad().text()).meshes.at(0);
    ASSERT_EQ(m.positions.size(), 4u);
    EXPECT_EQ(m.positions[0], float3(1, 2, 3));
    EXPECT_EQ(m.positions[2], float3(3, 4, 3));
    EXPECT_EQ(m.triangles, (std::vector<uint3>{uint3(0, 1, 2), uint3(0, 2, 3)}));
    EXPECT_EQ(m.triangle_materials, (std::vector<uint32_t>{0, 0}));
    EXPECT_TRUE(m.has_texcoords && m.has_colors && !m.normals_computed);
    EXPECT_EQ(m.normals[3], float3(0, 0, 1));
    EXPECT_EQ(m.texcoords[0], float2(0, 1));   // glTF's (0, 0) is the first texel already: no flip
    EXPECT_FLOAT_EQ(m.texcoords[3].y, 32768.0f / 65535.0f);
    EXPECT_EQ(m.colors[0], float3(1, 0, 0));   // linear, alpha dropped
    EXPECT_FLOAT_EQ(m.colors[3].y, 0.4f);
    EXPECT_EQ(m.obj_positions, m.positions);
    EXPECT_EQ(m.position_ids, (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST_F(GltfMeshes, GlbReadsAsTheSameMesh) {
    const Gltf g = quad();
    const Mesh text = load_gltf("meshes/quad.gltf", g.text()).meshes.at(0);
    const Mesh binary = load_gltf("meshes/quad.glb", g.glb()).meshes.at(0);
    EXPECT_EQ(binary.positions, text.positions);
    EXPECT_EQ(binary.normals, text.normals);
    EXPECT_EQ(binary.texcoords, text.texcoords);
    EXPECT_EQ(binary.colors, text.colors);
    EXPECT_EQ(binary.triangles, text.triangles);
}

TEST_F(GltfMeshes, StripsFansAndMirrorsBecomeCounterClockwiseTriangles) {
    Gltf g;
    // Five points of a zig-zag, not indexed; signed-byte normalized positions (KHR_mesh_quantization).
    const int position = g.accessor(std::vector<int8_t>{0, 0, 0, 0, 127, 0, 127, 0, 0, 127, 127, 0, -128, -127, 0, 0},
                                    5120, "VEC3", 5, true);
    for (int mode : {5, 6}) g.json["meshes"].push_back({{"primitives", {{{"attributes", {{"POSITION", position}}}, {"mode", mode}}}}});
    // The first three points again (the same view) as a plain triangle list, under a mirroring node.
    g.json["accessors"].push_back(g.json["accessors"][0]);
    g.json["accessors"][1]["count"] = 3;
    g.json["meshes"].push_back({{"primitives", {{{"attributes", {{"POSITION", 1}}}}}}});
    g.json["extensionsUsed"] = {"KHR_mesh_quantization"};
    g.json["extensionsRequired"] = {"KHR_mesh_quantization"};
    g.json["nodes"] = Json::parse(R"([{"children": [1, 2, 3]}, {"mesh": 0}, {"mesh": 1}, {"mesh": 2, "scale": [-1, 1, 1]}])");
    const Mesh m = load_gltf("meshes/shapes.gltf", g.text()).meshes.at(0);
    // Strip 0 1 2 3 4: (0 1 2), (1 3 2), (2 3 4); fan: (1 2 0), (2 3 0), (3 4 0); each primitive its own vertices.
    ASSERT_EQ(m.triangles.size(), 7u);
    EXPECT_EQ(m.triangles[0], uint3(0, 1, 2));
    EXPECT_EQ(m.triangles[1], uint3(1, 3, 2));
    EXPECT_EQ(m.triangles[2], uint3(2, 3, 4));
    EXPECT_EQ(m.triangles[3], uint3(5, 6, 7));   // fan vertices taken in first use: 1 → 5, 2 → 6, 0 → 7
    EXPECT_EQ(m.triangles[5], uint3(8, 9, 7));
    EXPECT_EQ(m.triangles[6], uint3(10, 12, 11));   // mirrored by scale −1: winding reversed
    EXPECT_EQ(m.positions[1], float3(0, 1, 0));
    EXPECT_EQ(m.positions[4], float3(-1, -1, 0));   // −128 clamps to −1
    EXPECT_EQ(m.positions[11], float3(0, 1, 0));
    EXPECT_EQ(m.positions[12], float3(-1, 0, 0));
    // Shared positions are one OBJ position (the vertices parameter keeps the primitives together).
    EXPECT_EQ(m.obj_positions.size(), 6u);   // (0,0,0) (0,1,0) (1,0,0) (1,1,0) (−1,−1,0) (−1,0,0)
    EXPECT_TRUE(m.normals_computed && !m.has_texcoords && !m.has_colors);
    // Every triangle faces −z, the mirrored one too (its reversed winding undoes the mirror).
    EXPECT_NEAR(m.normals[0].z, -1.0f, 1e-6f);
}

TEST_F(GltfMeshes, SparseAccessorsOverwriteTheirBase) {
    Gltf g;
    // Three zero positions (no buffer view) with vertices 1 and 2 replaced by sparse values.
    g.accessor(std::vector<uint8_t>{1, 2}, 5121, "SCALAR", 2);
    g.floats({1, 0, 0, 0, 1, 0}, "VEC3", 2);
    g.json["accessors"] = Json::parse(R"([{"componentType": 5126, "count": 3, "type": "VEC3", "sparse": {"count": 2,
        "indices": {"bufferView": 0, "componentType": 5121}, "values": {"bufferView": 1}}}])");
    g.json["meshes"].push_back({{"primitives", {{{"attributes", {{"POSITION", 0}}}}}}});
    g.json["nodes"] = Json::parse(R"([{"mesh": 0}])");
    const Mesh m = load_gltf("meshes/sparse.gltf", g.text()).meshes.at(0);
    EXPECT_EQ(m.positions, (std::vector<float3>{float3(0, 0, 0), float3(1, 0, 0), float3(0, 1, 0)}));
    g.json["accessors"][0]["sparse"]["count"] = 4;
    EXPECT_EQ(error_of_gltf(g.text()), "scene.json: meshes[0].file: meshes/bad.gltf: mesh 0 primitive 0 POSITION "
                                       "(accessor 0) sparse: count 4 (1 to the accessor's 3)");
}

TEST_F(GltfMeshes, DebianSamplesRead) {
    if (!std::filesystem::exists(kSamples)) GTEST_SKIP() << "assimp-testmodels is not installed";
    const std::string box = (kSamples / "BoxTextured-glTF/BoxTextured.gltf").string();
    testing::internal::CaptureStderr();
    const Scene scene = load(scene_for(box, "gltf"));
    const std::string notes = testing::internal::GetCapturedStderr();
    const Mesh& m = scene.meshes.at(0);
    EXPECT_EQ(m.positions.size(), 24u);
    EXPECT_EQ(m.triangles.size(), 12u);
    EXPECT_EQ(m.obj_positions.size(), 8u);
    EXPECT_TRUE(m.has_texcoords && !m.normals_computed);
    // The root node turns z up into y up: the box spans ±0.5 on every axis either way.
    for (const float3& p : m.positions) EXPECT_NEAR(std::max({std::fabs(p.x), std::fabs(p.y), std::fabs(p.z)}), 0.5f, 1e-6f);
    const int material = scene.find_material("cube/Texture");
    ASSERT_GE(material, 0);
    EXPECT_EQ(scene.materials[size_t(material)].model, "pbr");
    EXPECT_EQ(scene.materials[size_t(material)].value("metallic")[0], 0.0f);
    const int32_t texture = scene.materials[size_t(material)].texture("base_color_texture");
    ASSERT_GE(texture, 0);
    EXPECT_EQ(scene.textures[size_t(texture)].width, 211u);
    // The sampler mirrors and clamps; the renderer repeats, and says so.
    EXPECT_NE(notes.find("sampler wrap MIRRORED_REPEAT read as REPEAT"), std::string::npos) << notes;
    for (const char* other : {"BoxTextured-glTF-Binary/BoxTextured.glb", "BoxTextured-glTF-Embedded/BoxTextured.gltf"}) {
        SCOPED_TRACE(other);
        testing::internal::CaptureStderr();
        const Scene same = load(scene_for((kSamples / other).string(), "gltf"));
        testing::internal::GetCapturedStderr();
        EXPECT_EQ(same.meshes.at(0).positions, m.positions);
        EXPECT_EQ(same.meshes.at(0).texcoords, m.texcoords);
        EXPECT_EQ(same.textures.at(0).texels, scene.textures.at(0).texels);
    }
}

TEST_F(GltfMeshes, GltfMaterialsBecomePbrMaterials) {
    Gltf g = quad();
    g.json["meshes"][0]["primitives"].push_back(g.json["meshes"][0]["primitives"][0]);
    g.json["meshes"][0]["primitives"].push_back(g.json["meshes"][0]["primitives"][0]);
    g.json["meshes"][0]["primitives"][0]["material"] = 0;
    g.json["meshes"][0]["primitives"][1]["material"] = 1;   // the third has none
    g.json["materials"] = Json::parse(R"([
      {"name": "red", "pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.1, 0.2, 1], "metallicFactor": 0.25,
       "roughnessFactor": 0.75, "metallicRoughnessTexture": {"index": 0}}, "emissiveFactor": [0.5, 0.25, 0],
       "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 2}}},
      {"normalTexture": {"index": 0, "scale": 1}}])");
    g.json["textures"] = Json::parse(R"([{"source": 0}])");
    g.json["images"] = Json::parse(R"([{"uri": "mr.png"}])");
    write_png("meshes/mr.png", 1, 1, 3, {10, 128, 255});
    const Scene scene = load_gltf("meshes/quad.gltf", g.text(), "gltf");
    const int red = scene.find_material("cube/red"), unnamed = scene.find_material("cube/1"),
              fallback = scene.find_material("cube/default");
    ASSERT_TRUE(red >= 0 && unnamed >= 0 && fallback >= 0);
    const Mesh& m = scene.meshes.at(0);
    EXPECT_EQ(m.triangle_materials, (std::vector<uint32_t>{uint32_t(red), uint32_t(red), uint32_t(unnamed),
                                                           uint32_t(unnamed), uint32_t(fallback), uint32_t(fallback)}));
    const Material& r = scene.materials[size_t(red)];
    EXPECT_EQ(r.model, "pbr");
    EXPECT_EQ(r.color("base_color"), float3(0.8f, 0.1f, 0.2f));
    EXPECT_EQ(r.value("metallic")[0], 0.25f);
    EXPECT_EQ(r.value("roughness")[0], 0.75f);
    EXPECT_EQ(r.color("emissive"), float3(1.0f, 0.5f, 0.0f));
    // The metallic-roughness texture as stored (G roughness, B metallic), its factors multiplied in.
    const float4 texel = scene.textures.at(size_t(r.texture("metallic_roughness_texture"))).texels.at(0);
    EXPECT_NEAR(texel.y, 128 / 255.0f * 0.75f, 1e-4f);
    EXPECT_NEAR(texel.z, 0.25f, 1e-4f);
    // The normal texture: the same image, as stored.
    const float4 normal = scene.textures.at(size_t(scene.materials[size_t(unnamed)].texture("normal_texture"))).texels.at(0);
    EXPECT_NEAR(normal.x, 10 / 255.0f, 1e-4f);
    // The specification's default material: metallic and rough.
    EXPECT_EQ(scene.materials[size_t(fallback)].value("metallic")[0], 1.0f);
    EXPECT_EQ(scene.materials[size_t(fallback)].value("roughness")[0], 1.0f);
    // Their parameters are addressed by name.
    std::string why;
    EXPECT_TRUE(find_parameter(scene, "materials.cube/red.base_color", &why)) << why;

    // A URI's percent escapes are decoded and its fragment dropped (Blender writes "base color.png" as
    // base%20color.png); '+' and a '%' without hex digits are the name's own (tinygltf read "1 1?.png").
    write_png("meshes/base color.png", 1, 1, 3, {200, 100, 50});
    write_png("meshes/1+1%.png", 1, 1, 3, {7, 7, 7});
    g.json["images"] = Json::parse(R"([{"uri": "base%20color.png#page=1"}, {"uri": "1+1%.png"}])");
    g.json["textures"] = Json::parse(R"([{"source": 0}, {"source": 1}])");
    g.json["materials"][1]["normalTexture"]["index"] = 1;
    const Scene escaped = load_gltf("meshes/quad.gltf", g.text(), "gltf");
    const auto first_texel = [&](const char* texture) {
        const Material& m = escaped.materials[size_t(escaped.find_material(texture[0] == 'm' ? "cube/red" : "cube/1"))];
        return escaped.textures.at(size_t(m.texture(texture))).texels.at(0);
    };
    EXPECT_NEAR(first_texel("metallic_roughness_texture").y, 100 / 255.0f * 0.75f, 1e-4f);
    EXPECT_NEAR(first_texel("normal_texture").x, 7 / 255.0f, 1e-4f);
    g.json["images"] = Json::parse(R"([{"uri": "gone%20away.png"}, {"uri": "1+1%.png"}])");
    write("meshes/quad.gltf", g.text());
    const std::string gone = error_of(scene_for("meshes/quad.gltf", "gltf"));
    EXPECT_NE(gone.find("meshes/gone away.png: No such file"), std::string::npos) << gone;
    g.json["images"] = Json::parse(R"([{"uri": "mr.png"}])");
    g.json["textures"] = Json::parse(R"([{"source": 0}])");
    g.json["materials"][1]["normalTexture"]["index"] = 0;

    // Names that several materials share take their index.
    g.json["materials"][1]["name"] = "red";
    const Scene shared = load_gltf("meshes/quad.gltf", g.text(), "gltf");
    EXPECT_GE(shared.find_material("cube/red#0"), 0);
    EXPECT_GE(shared.find_material("cube/red#1"), 0);
    // A made-up name that a given one already has takes the index too: a material named "default" beside
    // primitives without one, and "red#1" beside two named "red" (both refused before).
    g.json["materials"][0]["name"] = "default";
    g.json["materials"][1]["name"] = "red";
    const Scene named_default = load_gltf("meshes/quad.gltf", g.text(), "gltf");
    const int given = named_default.find_material("cube/default"), made = named_default.find_material("cube/default#2");
    ASSERT_TRUE(given >= 0 && made >= 0);
    EXPECT_EQ(named_default.meshes.at(0).triangle_materials.front(), uint32_t(given));
    EXPECT_EQ(named_default.meshes.at(0).triangle_materials.back(), uint32_t(made));
    EXPECT_EQ(named_default.materials[size_t(made)].value("metallic")[0], 1.0f);   // the specification's default
    g.json["materials"].push_back(g.json["materials"][1]);
    g.json["materials"][0]["name"] = "red#1";
    g.json["meshes"][0]["primitives"][2]["material"] = 2;
    const Scene hashes = load_gltf("meshes/quad.gltf", g.text(), "gltf");
    for (const char* name : {"cube/red#1", "cube/red#1#1", "cube/red#2"})
        EXPECT_GE(hashes.find_material(name), 0) << name;
}

// Two materials that use one image with the same factors share one scene texture, until one of them is free or
// written: then it gets its own (freeing A's moved B's with it, and two inits overwrote each other).
TEST_F(GltfMeshes, AFreeTextureIsAMaterialsOwnThoughTheImageIsShared) {
    Gltf g = quad();
    g.json["meshes"][0]["primitives"].push_back(g.json["meshes"][0]["primitives"][0]);
    g.json["meshes"][0]["primitives"][0]["material"] = 0;
    g.json["meshes"][0]["primitives"][1]["material"] = 1;
    g.json["materials"] = Json::parse(R"([{"name": "A", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}},
                                          {"name": "B", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}])");
    g.json["textures"] = Json::parse(R"([{"source": 0}])");
    g.json["images"] = Json::parse(R"([{"uri": "col.png"}])");
    write_png("meshes/col.png", 1, 1, 3, {200, 100, 50});
    write("meshes/quad.gltf", g.text());
    const auto texture_of = [](const Scene& s, const char* m) {
        return s.materials[size_t(s.find_material(m))].texture("base_color_texture");
    };
    Scene shared = load(scene_for("meshes/quad.gltf", "gltf"));
    EXPECT_EQ(texture_of(shared, "cube/A"), texture_of(shared, "cube/B"));
    // A write to A's texture (Python's scene.parameters, --params) gives A its own and leaves B's.
    const std::vector<float4> before = shared.textures.at(size_t(texture_of(shared, "cube/B"))).texels;
    std::string why;
    const std::optional<Parameter> a = find_parameter(shared, "materials.cube/A.base_color_texture", &why);
    ASSERT_TRUE(a) << why;
    set_parameter_value(shared, *a, std::vector<float>(a->size, 0.25f));
    EXPECT_NE(texture_of(shared, "cube/A"), texture_of(shared, "cube/B"));
    EXPECT_EQ(shared.textures.at(size_t(texture_of(shared, "cube/B"))).texels, before);
    EXPECT_EQ(shared.textures.at(size_t(texture_of(shared, "cube/A"))).texels.at(0), float4(0.25f, 0.25f, 0.25f, 1.0f));
    for (const char* free : {"A", "B"}) {
        Json j = scene_for("meshes/quad.gltf", "gltf");
        j["optimize"]["parameters"][std::string("materials.cube/") + free + ".base_color_texture"]["init"] =
            Json::parse("[0.5, 0.5, 0.5]");
        const Scene own = load(j);
        const int32_t a = texture_of(own, "cube/A"), b = texture_of(own, "cube/B");
        EXPECT_NE(a, b) << free;
        EXPECT_EQ(own.textures.at(size_t(a)).texels, own.textures.at(size_t(b)).texels) << free;
    }
}

TEST_F(GltfMeshes, OtherMaterialModesAreRefusedNamingTheOneThatWorks) {
    write("meshes/quad.gltf", quad().text());
    EXPECT_EQ(error_of(scene_for("meshes/quad.gltf", "mtl")),
              "scene.json: meshes[0].material: \"mtl\" names an OBJ's MTL materials; meshes/quad.gltf is glTF: name one "
              "of `materials`, or \"gltf\" for its own materials");
    EXPECT_EQ(error_of(scene_for("meshes/cube.obj", "gltf")),
              "scene.json: meshes[0].material: \"gltf\" names a glTF file's materials; meshes/cube.obj is OBJ: name one "
              "of `materials`, or \"mtl\" for its MTL file");
}

TEST_F(GltfMeshes, IgnoredContentIsNotedOnStderr) {
    Gltf g = quad();
    g.json["extensionsUsed"] = {"KHR_materials_sheen"};
    g.json["animations"] = Json::array({Json::object({{"channels", Json::array()}, {"samplers", Json::array()}})});
    testing::internal::CaptureStderr();
    load_gltf("meshes/quad.gltf", g.text());
    const std::string notes = testing::internal::GetCapturedStderr();
    EXPECT_NE(notes.find("adjoint: note: scene.json: meshes[0].file: meshes/quad.gltf: extension KHR_materials_sheen "
                         "ignored\n"),
              std::string::npos)
        << notes;
    EXPECT_NE(notes.find("meshes/quad.gltf: animations ignored\n"), std::string::npos) << notes;
}

TEST_F(GltfMeshes, BrokenFilesAreNamed) {
    const std::string at = "scene.json: meshes[0].file: meshes/bad.gltf: ";
    {
        Gltf g = quad();
        g.bin.replace(g.bin.size() - 2, 2, std::string("\x09\x00", 2));   // the last index: 9 of 4 vertices
        EXPECT_EQ(error_of_gltf(g.text()), at + "mesh 0 primitive 0: index 9 is past its 4 vertices");
    }
    {
        Gltf g = quad();
        g.bin.replace(4, 4, std::string("\x00\x00\xc0\x7f", 4));   // vertex 0's y: NaN
        EXPECT_EQ(error_of_gltf(g.text()), at + "mesh 0 primitive 0: vertex 0 has a position that is not finite");
    }
    {
        Gltf g = quad();
        g.json["nodes"][1]["children"] = {0};
        EXPECT_EQ(error_of_gltf(g.text()), at + "node 0 is its own ancestor (a node cycle)");
    }
    {
        // Points and lines are skipped (a CAD export's edge lines beside its surfaces); with nothing else, no
        // triangles.
        Gltf g = quad();
        g.json["meshes"][0]["primitives"][0]["mode"] = 0;
        EXPECT_EQ(error_of_gltf(g.text()),
                  at + "has no triangles in its scene (its POINTS and LINES primitives are skipped)");
        g.json["meshes"][0]["primitives"].push_back(g.json["meshes"][0]["primitives"][0]);
        g.json["meshes"][0]["primitives"][0]["mode"] = 4;   // triangles, then the copy as LINES
        g.json["meshes"][0]["primitives"][1]["mode"] = 1;
        testing::internal::CaptureStderr();
        const Scene s = load_gltf("meshes/quad.gltf", g.text());
        const std::string notes = testing::internal::GetCapturedStderr();
        EXPECT_NE(notes.find("meshes/quad.gltf: LINES primitives skipped (Adjoint draws TRIANGLES, TRIANGLE_STRIP "
                             "and TRIANGLE_FAN)\n"),
                  std::string::npos)
            << notes;
        EXPECT_EQ(s.meshes.at(0).triangles.size(), 2u);
    }
    {
        Gltf g = quad();
        g.json["extensionsRequired"] = {"KHR_draco_mesh_compression"};
        EXPECT_EQ(error_of_gltf(g.text()), at + "requires the extension KHR_draco_mesh_compression, which Adjoint does "
                                                "not read (of required extensions it reads KHR_mesh_quantization)");
    }
    {
        Gltf g = quad();
        g.json["accessors"][0]["count"] = 5;   // 60 bytes from a 48-byte view
        EXPECT_EQ(error_of_gltf(g.text()), at + "mesh 0 primitive 0 POSITION (accessor 0): 5 elements of 12 bytes from "
                                                "byte 0 run past its buffer view (buffer view 0, 48 bytes)");
    }
    {
        Gltf g = quad();
        Json j = Json::parse(g.text());
        j["buffers"][0]["uri"] = "missing.bin";
        EXPECT_EQ(error_of_gltf(j.dump()), at + "cannot read meshes/missing.bin: No such file or directory");
    }
    EXPECT_EQ(error_of_gltf("{\"asset\": {\"version\": \"1.0\"}}"), at + "glTF version 1.0 (Adjoint reads glTF 2.0)");
    EXPECT_EQ(error_of_gltf("{\"asset\": {\"version\": 1}}"), at + "glTF version 1 (Adjoint reads glTF 2.0)");
    EXPECT_EQ(error_of_gltf("{\"asset\": {\"version\": \"2.0\"}}"), at + "has no scenes");
    // Cut, empty and foreign files (tinygltf said "Too short data size for glTF Binary.", "Invalid glTF binary.",
    // "JSON string too short.", "File size mismatch : ./<path>, requestedBytes 48, but got 40", and joined a URL to
    // the folder).
    EXPECT_EQ(error_of_gltf(std::string("glTF\x02\0\0\0", 8), "meshes/bad.glb"),
              "scene.json: meshes[0].file: meshes/bad.glb: a glTF binary of 8 bytes, shorter than its header and first "
              "chunk's (20 bytes)");
    {
        const std::string glb = quad().glb();
        EXPECT_EQ(error_of_gltf(glb.substr(0, glb.size() - 4), "meshes/bad.glb"),
                  "scene.json: meshes[0].file: meshes/bad.glb: a glTF binary of " + std::to_string(glb.size() - 4) +
                      " bytes whose header gives " + std::to_string(glb.size()) + " (the file is cut short)");
        std::string cut = glb.substr(0, 40);
        cut.replace(8, 4, std::string("\x28\0\0\0", 4));   // a header that agrees: 40 bytes
        EXPECT_EQ(error_of_gltf(cut, "meshes/bad.glb").find("scene.json: meshes[0].file: meshes/bad.glb: a glTF binary "
                                                            "of 40 bytes whose JSON chunk of "),
                  0u) << error_of_gltf(cut, "meshes/bad.glb");
    }
    EXPECT_EQ(error_of_gltf(""), at + "is empty (0 bytes): not a glTF file");
    {
        Gltf g = quad();
        Json j = Json::parse(g.text());
        j["buffers"][0]["uri"] = "https://example.com/quad.bin";
        EXPECT_EQ(error_of_gltf(j.dump()), at + "buffers[0].uri: https://example.com/quad.bin is a URL; Adjoint reads "
                                                "files beside the glTF (relative URIs) and data URIs");
        j["buffers"][0]["byteLength"] = j["buffers"][0]["byteLength"].get<int>() + 8;
        j["buffers"][0]["uri"] = "quad.bin";
        write("meshes/quad.bin", g.bin);
        EXPECT_EQ(error_of_gltf(j.dump()), at + "meshes/quad.bin holds " + std::to_string(g.bin.size()) +
                                                " bytes, not the byteLength its buffer gives (" +
                                                std::to_string(g.bin.size() + 8) + ")");
    }
    // glTF 1.0's binary container (KHR_binary_glTF) is version 1: tinygltf said "Invalid glTF binary."
    EXPECT_EQ(error_of_gltf(std::string("glTF\x01\0\0\0\x14\0\0\0\0\0\0\0\0\0\0\0", 20), "meshes/bad.glb"),
              "scene.json: meshes[0].file: meshes/bad.glb: a glTF binary of container version 1 (Adjoint reads glTF "
              "2.0, version 2)");
}

// Schema breaks (a member of the wrong type, a required member missing) named by their JSON path in the glTF,
// and a material's missing image. tinygltf reads a member of the wrong type as absent: each of these loaded and
// rendered wrong (a white material, no texture, a non-indexed primitive) without the schema check.
TEST_F(GltfMeshes, SchemaBreaksAndMissingImagesAreNamed) {
    const std::string at = "scene.json: meshes[0].file: meshes/bad.gltf: ";
    {
        Gltf g = quad();
        g.json["accessors"][0]["count"] = "four";
        EXPECT_EQ(error_of_gltf(g.text()), at + "accessors[0].count: expected an integer >= 0");
    }
    {
        Gltf g = quad();
        g.json["accessors"][0].erase("componentType");
        EXPECT_EQ(error_of_gltf(g.text()), at + "accessors[0].componentType: required key is missing");
    }
    const auto textured = [] {
        Gltf g = quad();
        g.json["meshes"][0]["primitives"][0]["material"] = 0;
        g.json["materials"] = Json::parse(R"([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}])");
        g.json["textures"] = Json::parse(R"([{"source": 0}])");
        g.json["images"] = Json::parse(R"([{"uri": "tex.png"}])");
        return g;
    };
    const std::vector<std::pair<std::function<void(Json&)>, std::string>> breaks = {
        {[](Json& j) { j["materials"][0]["pbrMetallicRoughness"] = {"not an object"}; },
         "materials[0].pbrMetallicRoughness: expected an object"},
        {[](Json& j) { j["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["index"] = -1; },
         "materials[0].pbrMetallicRoughness.baseColorTexture.index: expected an integer >= 0"},
        {[](Json& j) { j["materials"][0]["normalTexture"] = {{"scale", "not a number"}}; },
         "materials[0].normalTexture.scale: expected a number"},
        {[](Json& j) { j["materials"][0]["normalTexture"] = {{"scale", 2}}; },
         "materials[0].normalTexture.index: required key is missing"},
        {[](Json& j) { j["materials"][0]["extensions"] = {{"KHR_materials_emissive_strength", 5}}; },
         "materials[0].extensions.KHR_materials_emissive_strength: expected an object"},
        {[](Json& j) { j["scene"] = "hello"; }, "scene: expected an integer >= 0"},
        {[](Json& j) { j["scenes"][0]["name"] = 42; }, "scenes[0].name: expected a string"},
        {[](Json& j) { j["meshes"][0]["primitives"] = j["meshes"][0]["primitives"][0]; },
         "meshes[0].primitives: expected an array"},
        {[](Json& j) { j["meshes"][0]["primitives"][0]["indices"] = 4.0; },
         "meshes[0].primitives[0].indices: expected an integer >= 0"},
        {[](Json& j) { j["nodes"][0]["translation"] = {1, "2", 3}; }, "nodes[0].translation[1]: expected a number"},
        {[](Json& j) { j["nodes"][1]["matrix"] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; },
         "nodes[1].scale: given beside matrix (glTF takes one or the other)"},
        {[](Json& j) { j["textures"][0]["sampler"] = Json::object(); },
         "textures[0].sampler: expected an integer >= 0"},
    };
    write_solid_png("meshes/tex.png", 2, 2, 200, 100, 50);
    {
        testing::internal::CaptureStderr();   // sampler notes
        write("meshes/ok.gltf", textured().text());
        EXPECT_GE(load(scene_for("meshes/ok.gltf", "gltf")).textures.size(), 1u);   // unbroken, it loads
        testing::internal::GetCapturedStderr();
    }
    for (const auto& [edit, what] : breaks) {
        SCOPED_TRACE(what);
        Gltf g = textured();
        edit(g.json);
        write("meshes/bad.gltf", g.text());
        EXPECT_EQ(error_of(scene_for("meshes/bad.gltf", "gltf")), at + what);
        // A .glb's JSON chunk is checked the same way.
        write("meshes/bad.glb", g.glb());
        EXPECT_EQ(error_of(scene_for("meshes/bad.glb", "gltf")), "scene.json: meshes[0].file: meshes/bad.glb: " + what);
    }
    {
        Gltf g = quad();
        g.json["meshes"][0]["primitives"][0]["material"] = 0;
        g.json["materials"] = Json::parse(R"([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}])");
        g.json["textures"] = Json::parse(R"([{"source": 0}])");
        g.json["images"] = Json::parse(R"([{"uri": "gone.png"}])");
        write("meshes/bad.gltf", g.text());
        EXPECT_EQ(error_of(scene_for("meshes/bad.gltf", "gltf")),
                  at + "image 0: cannot read meshes/gone.png: No such file or directory");
    }
    for (const int off : {4, -4, 1}) {
        // A data URI's bytes against byteLength, named by its member (tinygltf's error quoted the URI whole).
        Gltf g = quad();
        Json j = Json::parse(g.text());
        const size_t holds = g.bin.size();
        j["buffers"][0]["byteLength"] = int(holds) + off;
        write("meshes/bad.gltf", j.dump());
        EXPECT_EQ(error_of(scene_for("meshes/bad.gltf")),
                  at + "buffers[0].byteLength: " + std::to_string(int(holds) + off) + ", but its data URI holds " +
                      std::to_string(holds) + " bytes");
    }
    {
        // Its padding left out (as some writers do), the same bytes: it loads.
        Gltf g = quad();
        Json j = Json::parse(g.text());
        std::string uri = j["buffers"][0]["uri"];
        ASSERT_EQ(uri.back(), '=');   // 104 bytes: one '=' of padding
        j["buffers"][0]["uri"] = uri.substr(0, uri.size() - 1);
        write("meshes/unpadded.gltf", j.dump());
        EXPECT_EQ(load(scene_for("meshes/unpadded.gltf")).meshes.at(0).triangles.size(), 2u);
        j["buffers"][0]["uri"] = "data:application/octet-stream;base64,AAAA!!!";
        write("meshes/bad.gltf", j.dump());
        EXPECT_EQ(error_of(scene_for("meshes/bad.gltf")),
                  at + "buffers[0].uri: its base64 data holds a character base64 has not (at character 4)");
    }
}

TEST_F(GltfMeshes, DebianBrokenSamplesAreNamed) {
    if (!std::filesystem::exists(kSamples)) GTEST_SKIP() << "assimp-testmodels is not installed";
    const auto error = [&](const char* file) { return error_of(scene_for((kSamples / file).string())); };
    const std::string at = "scene.json: meshes[0].file: " + kSamples.string() + "/";
    EXPECT_EQ(error("IndexOutOfRange/IndexOutOfRange.gltf"),
              at + "IndexOutOfRange/IndexOutOfRange.gltf: mesh 0 primitive 0: index 255 is past its 24 vertices");
    EXPECT_EQ(error("RecursiveNodes/RecursiveNodes.gltf"),
              at + "RecursiveNodes/RecursiveNodes.gltf: node 0 is its own ancestor (a node cycle)");
    EXPECT_EQ(error("MissingBin/BoxTextured.gltf"),
              at + "MissingBin/BoxTextured.gltf: cannot read " + kSamples.string() +
                  "/MissingBin/BoxTextured0.bin: No such file or directory");
    EXPECT_EQ(error("draco/2CylinderEngine.gltf"),
              at + "draco/2CylinderEngine.gltf: requires the extension KHR_draco_mesh_compression, which Adjoint does "
                   "not read (of required extensions it reads KHR_mesh_quantization)");
    EXPECT_EQ(error("BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb"),
              at + "BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb: mesh 0 primitive 0: vertex 0 has a position that is "
                   "not finite");
}

// assimp's schema-failure samples: each breaks glTF 2.0's schema in one member (tinygltf loaded all but badArray,
// as a white box or with the texture dropped), refused naming the member's JSON path in the file.
TEST_F(GltfMeshes, DebianWrongTypeSamplesAreNamed) {
    if (!std::filesystem::exists(kSamples)) GTEST_SKIP() << "assimp-testmodels is not installed";
    const std::string at = "scene.json: meshes[0].file: " + kSamples.string() + "/";
    const std::string texture = "materials[0].pbrMetallicRoughness.baseColorTexture.";
    for (const auto& [file, what] : std::vector<std::pair<std::string, std::string>>{
             {"wrongTypes/badArray.gltf", "meshes[0].primitives: expected an array"},
             {"wrongTypes/badExtension.gltf", texture + "extensions.KHR_texture_transform: expected an object"},
             {"wrongTypes/badNumber.gltf", "materials[0].normalTexture.scale: expected a number"},
             {"wrongTypes/badObject.gltf", "materials[0].pbrMetallicRoughness: expected an object"},
             {"wrongTypes/badString.gltf", "scenes[0].name: expected a string"},
             {"wrongTypes/badUint.gltf", texture + "index: expected an integer >= 0"},
             {"SchemaFailures/sceneWrongType.gltf", "scene: expected an integer >= 0"}}) {
        SCOPED_TRACE(file);
        EXPECT_EQ(error_of(scene_for((kSamples / file).string(), "gltf")), at + file + ": " + what);
    }
}

} // namespace adjoint::app::test

namespace adjoint::test {

// The OBJ cube written out as glTF (its unified vertices and triangles) renders the same image.
class GltfRender : public DeviceTest {};

TEST_F(GltfRender, AGltfCubeRendersAsItsObjTwin) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("adjoint_gltf_render_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cube.obj") << app::test::cube_obj;
    app::test::Json j = app::test::Json::parse(R"({
      "format": 1,
      "camera": { "eye": [2.5, 2, 4], "target": [0, 0, 0], "resolution": [48, 48] },
      "materials": { "base": { "albedo": [0.7, 0.5, 0.3], "specular": [0.3, 0.3, 0.3] } },
      "meshes": [ { "name": "cube", "file": "cube.obj", "material": "base", "rotation": {"axis": [0, 1, 0], "angle": 20} } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 2], "intensity": 20 } ]
    })");
    const app::Scene obj = app::load_scene_from_string(j.dump(), dir, "obj.json");
    const app::Mesh& m = obj.meshes[0];
    app::test::Gltf g;
    std::vector<float> p, n, uv;
    for (size_t v = 0; v < m.positions.size(); ++v) {
        p.insert(p.end(), {m.positions[v].x, m.positions[v].y, m.positions[v].z});
        n.insert(n.end(), {m.normals[v].x, m.normals[v].y, m.normals[v].z});
        uv.insert(uv.end(), {m.texcoords[v].x, m.texcoords[v].y});
    }
    std::vector<uint32_t> index;
    for (const uint3& t : m.triangles) index.insert(index.end(), {t.x, t.y, t.z});
    const size_t count = m.positions.size();
    const int pa = g.floats(p, "VEC3", count), na = g.floats(n, "VEC3", count), ta = g.floats(uv, "VEC2", count);
    const int ia = g.accessor(index, 5125, "SCALAR", index.size());
    g.json["meshes"].push_back({{"primitives", {{{"attributes", {{"POSITION", pa}, {"NORMAL", na}, {"TEXCOORD_0", ta}}},
                                                 {"indices", ia}}}}});
    g.json["nodes"] = app::test::Json::parse(R"([{"mesh": 0}])");
    std::ofstream(dir / "cube.gltf") << g.text();
    j["meshes"][0]["file"] = "cube.gltf";
    const app::Scene gltf = app::load_scene_from_string(j.dump(), dir, "gltf.json");
    EXPECT_EQ(gltf.meshes[0].positions, m.positions);
    const app::LinearImage a = app::SceneRenderer(device, obj).render(0);
    const app::LinearImage b = app::SceneRenderer(device, gltf).render(0);
    std::filesystem::remove_all(dir);
    ASSERT_EQ(a.texels.size(), b.texels.size());
    size_t lit = 0;
    for (size_t i = 0; i < a.texels.size(); ++i) {
        lit += a.texels[i].x > 0.01f;
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(a.texels[i][c], b.texels[i][c], 1e-6f) << i;
    }
    EXPECT_GT(lit, 200u);
}

} // namespace adjoint::test

namespace adjoint::app::test {

// Hostile bytes: every byte of a .glb set to 0xFF in turn (lengths, offsets, counts, indices, JSON) and every
// glTF sample Debian ships, sound or broken, either loads or is refused with a SceneError; none crashes.
TEST_F(GltfMeshes, CorruptedFilesLoadOrAreRefused) {
    const std::string glb = quad().glb();
    size_t refused = 0;
    for (size_t i = 0; i < glb.size(); ++i) {
        std::string bytes = glb;
        bytes[i] = '\xff';
        write("meshes/bad.glb", bytes);
        try {
            load(scene_for("meshes/bad.glb"));
        } catch (const SceneError&) {
            ++refused;
        }
    }
    EXPECT_GT(refused, glb.size() / 2);
    if (!std::filesystem::exists(kSamples)) return;
    size_t samples = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(kSamples)) {
        const std::string ext = entry.path().extension().string();
        if (ext != ".gltf" && ext != ".glb") continue;
        ++samples;
        testing::internal::CaptureStderr();
        try {
            load(scene_for(entry.path().string(), "gltf"));
        } catch (const SceneError&) {
        }
        testing::internal::GetCapturedStderr();
    }
    EXPECT_GT(samples, 20u);
}

} // namespace adjoint::app::test
