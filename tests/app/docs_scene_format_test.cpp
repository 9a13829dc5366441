// app/docs/scene-format.md kept true: its complete examples load, and every parameter path and plug-in is in it.
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/plugins.h>
#include <adjoint/app/scene.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace adjoint::app {
namespace {

const std::filesystem::path kSource = ADJOINT_SOURCE_DIR;

std::string read_text(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Block {
    std::string text;
    size_t line = 0;   // the fence's line in the file, 1-based
};

// The bodies of the blocks fenced as ```<language> (exactly that info string).
std::vector<Block> fenced_blocks(const std::string& markdown, const std::string& language) {
    std::vector<Block> blocks;
    std::istringstream in(markdown);
    std::string line;
    size_t number = 0;
    Block* open = nullptr;
    std::string open_fence;
    while (std::getline(in, line)) {
        ++number;
        if (open) {
            if (line == open_fence) open = nullptr;
            else open->text += line + "\n";
            continue;
        }
        if (line.rfind("```", 0) == 0 && line.size() > 3) {
            if (line.substr(3) != language) continue;
            blocks.push_back({"", number});
            open = &blocks.back();
            open_fence = "```";
        }
    }
    EXPECT_EQ(open, nullptr) << "an unclosed ```" << language << " block";
    return blocks;
}

const std::string& scene_doc() {
    static const std::string text = read_text(kSource / "app" / "docs" / "scene-format.md");
    return text;
}

TEST(DocsSceneFormat, EveryJsonExampleLoads) {
    const std::vector<Block> blocks = fenced_blocks(scene_doc(), "json");
    // The page promises complete examples of each part; fewer blocks than this means some were lost.
    ASSERT_GE(blocks.size(), 10u);
    const std::filesystem::path base = kSource / "assets" / "scenes";
    for (const Block& b : blocks) {
        const std::string name = "scene-format.md line " + std::to_string(b.line);
        try {
            const Scene scene = load_scene_from_string(b.text, base, name);
            EXPECT_FALSE(scene.meshes.empty()) << name;
        } catch (const std::exception& e) {
            ADD_FAILURE() << name << ": " << e.what();
        }
    }
}

// The checker itself: a broken example is reported, so the test above can fail.
TEST(DocsSceneFormat, ABrokenExampleIsRefused) {
    const std::string doc = "text\n```json\n{ \"format\": 1, \"camera\": {}, \"meshes\": [] }\n```\n"
                            "```jsonc\n\"not\": \"loaded\"\n```\n";
    const std::vector<Block> blocks = fenced_blocks(doc, "json");
    ASSERT_EQ(blocks.size(), 1u);
    EXPECT_EQ(blocks[0].line, 2u);
    EXPECT_THROW(load_scene_from_string(blocks[0].text, kSource / "assets" / "scenes", "x"), SceneError);
}

// A kind's path as the page writes it: materials.<m>.albedo, lights.<l>.position, meshes.<m>.rotation, camera.eye.
std::string documented_path(ParameterCollection collection, std::string_view property) {
    const char* name = collection == ParameterCollection::lights ? "<l>" : "<m>";
    if (collection == ParameterCollection::camera) return "camera." + std::string(property);
    return std::string(collection_name(collection)) + "." + name + "." + std::string(property);
}

TEST(DocsSceneFormat, EveryParameterPathIsDocumented) {
    std::vector<std::string> paths;
    for (const ParameterKindInfo& kind : parameter_kinds()) {
        if (kind.kind == ParameterKind::material_value) {
            for (const MaterialModel* model : material_models())
                for (const MaterialProperty& p : model->properties) paths.push_back(documented_path(kind.collection, p.name));
        } else if (kind.kind == ParameterKind::material_texture) {
            for (const MaterialModel* model : material_models())
                for (const MaterialTexture& t : model->textures) paths.push_back(documented_path(kind.collection, t.name));
        } else {
            paths.push_back(documented_path(kind.collection, kind.property));
        }
    }
    EXPECT_GE(paths.size(), parameter_kind_count + 8);   // pbr and phong bring at least 9 names of their own
    for (const std::string& path : paths)
        EXPECT_NE(scene_doc().find("`" + path + "`"), std::string::npos) << path << " is not in scene-format.md";
}

TEST(DocsSceneFormat, EveryPluginAndItsKeysAreDocumented) {
    const std::string& doc = scene_doc();
    const auto expect_named = [&](std::string_view what, std::string_view name) {
        EXPECT_NE(doc.find("`" + std::string(name) + "`"), std::string::npos)
            << what << " " << name << " is not in scene-format.md";
    };
    for (const MaterialModel* m : material_models()) {
        EXPECT_NE(doc.find("`\"model\": \"" + std::string(m->name) + "\"`"), std::string::npos) << m->name;
        for (const MaterialProperty& p : m->properties) expect_named("material key", p.name);
        for (const MaterialTexture& t : m->textures) expect_named("material key", t.name);
    }
    for (const LightModel* l : light_models()) {
        expect_named("light type", l->name);
        for (std::string_view key : l->keys) expect_named("light key", key);
    }
    for (const LossModel* l : loss_models()) expect_named("loss", "\"" + std::string(l->name) + "\"");
    for (const OptimizerModel* o : optimizer_models()) {
        expect_named("optimizer", "\"" + std::string(o->name) + "\"");
        for (const OptimizerKey& k : o->keys) expect_named("optimizer key", k.name);
    }
}

// A scene with every kind of object the loader reads keys of (each light type, both material models, an orbit,
// soft settings, regularizers), for the probe below.
nlohmann::ordered_json probe_scene() {
    return nlohmann::ordered_json::parse(R"({
      "format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "resolution": [32, 32] },
      "views": { "orbit": { "count": 2, "elevation": [0, 10] } },
      "materials": { "p": { "albedo": [0.5, 0.5, 0.5] }, "q": { "model": "pbr", "base_color": [0.5, 0.5, 0.5] } },
      "meshes": [ { "name": "ball", "file": "../meshes/uv_sphere.obj", "material": "p",
                    "rotation": { "axis": [0, 1, 0], "angle": 10 } } ],
      "lights": [ { "name": "a", "type": "point", "position": [0, 2, 2] },
                  { "name": "b", "type": "directional", "direction": [0, -1, 0] },
                  { "name": "c", "type": "ambient" },
                  { "name": "d", "type": "sh", "coefficients": [[1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0]] },
                  { "name": "e", "type": "environment", "color": [1, 1, 1] } ],
      "render": { "visibility": "soft", "soft": { "sigma": 1e-4 } },
      "optimize": { "parameters": { "materials.p.albedo": { "init": [0.5, 0.5, 0.5] } },
                    "regularizers": { "laplacian": 0 } }
    })");
}

// The keys the loader accepts at `pointer`, as its own error for an unknown key there lists them.
std::vector<std::string> accepted_keys(nlohmann::ordered_json scene, const std::string& pointer) {
    scene[nlohmann::ordered_json::json_pointer(pointer)]["zz_not_a_key"] = 1;
    const std::string lead = "unknown key (expected one of: ";
    try {
        load_scene_from_string(scene.dump(), kSource / "assets" / "scenes", "probe.json");
    } catch (const SceneError& e) {
        const std::string what = e.what();
        const size_t at = what.find(lead);
        if (at == std::string::npos || what.find("zz_not_a_key") == std::string::npos) {
            ADD_FAILURE() << pointer << ": " << what;
            return {};
        }
        std::vector<std::string> keys;
        std::istringstream list(what.substr(at + lead.size(), what.rfind(')') - at - lead.size()));
        std::string key;
        while (std::getline(list, key, ',')) keys.push_back(key.substr(key.find_first_not_of(' ')));
        return keys;
    }
    ADD_FAILURE() << pointer << ": an unknown key was accepted";
    return {};
}

// Every key the loader accepts anywhere in a scene is on the page (as `key` or as "key" in an example).
TEST(DocsSceneFormat, EveryKeyTheLoaderAcceptsIsDocumented) {
    const nlohmann::ordered_json scene = probe_scene();
    size_t probed = 0;
    for (const char* pointer : {"", "/camera", "/views", "/views/orbit", "/materials/p", "/materials/q", "/meshes/0",
                                "/meshes/0/rotation", "/lights/0", "/lights/1", "/lights/2", "/lights/3", "/lights/4",
                                "/render", "/render/soft", "/optimize", "/optimize/parameters/materials.p.albedo",
                                "/optimize/regularizers"}) {
        for (const std::string& key : accepted_keys(scene, pointer)) {
            ++probed;
            const bool named = scene_doc().find("`" + key + "`") != std::string::npos ||
                               scene_doc().find("\"" + key + "\"") != std::string::npos;
            EXPECT_TRUE(named) << key << " (accepted at " << (*pointer ? pointer : "the top level")
                               << ") is not in scene-format.md";
        }
    }
    EXPECT_GE(probed, 60u);
    // Camera intrinsics and an optimize target's object form have keys of their own.
    nlohmann::ordered_json with = scene;
    with["camera"]["intrinsics"] = {{"fx", 30}, {"fy", 30}, {"cx", 16}, {"cy", 16}};
    for (const std::string& key : accepted_keys(with, "/camera/intrinsics"))
        EXPECT_NE(scene_doc().find("\"" + key + "\""), std::string::npos) << key;
    with = scene;
    with["optimize"]["target"] = {{"images", {"../textures/colourful_128.png"}}};
    const std::vector<std::string> target_keys = accepted_keys(with, "/optimize/target");
    EXPECT_EQ(target_keys, std::vector<std::string>{"images"});
}

} // namespace
} // namespace adjoint::app
