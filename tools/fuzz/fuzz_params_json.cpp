// libFuzzer target: params.json (adjoint-render --params, the scene's "params"): read_params_json and
// apply_params_file against a scene with a parameter of each storage (vectors, a rotation, a texture).
#include "fuzz_scene.h"

namespace {

const adjoint::app::Scene& scene() {
    static const adjoint::app::Scene s = [] {
        namespace fs = std::filesystem;
        const fs::path dir = adjoint::fuzz::folder() / "params";
        fs::create_directories(dir);
        // The texture the seeds name, beside params.json.
        adjoint::app::write_png(dir / "materials.skin.albedo_texture.png", adjoint::app::Image(4, 4, 3, 0.25f));
        return adjoint::app::load_scene_from_string(R"({"format": 1,
          "camera": {"eye": [0, 0, 3], "target": [0, 0, 0], "resolution": [8, 8]},
          "materials": {"m": {"albedo": [0.5, 0.5, 0.5]}, "skin": {"albedo_texture": "textures/colourful_128.png"}},
          "meshes": [{"name": "x", "file": "tri.obj", "material": "m"},
                     {"name": "y", "file": "tri.obj", "material": "skin", "rotation": {"axis": [0, 1, 0], "angle": 30}}],
          "lights": [{"name": "key", "type": "point", "position": [2, 3, 2]},
                     {"name": "sun", "type": "directional", "direction": [0, -1, 0]}]})",
                                                    adjoint::fuzz::folder(), "fuzz.json");
    }();
    return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const adjoint::app::Scene& original = scene();
    const std::filesystem::path file = adjoint::fuzz::folder() / "params" / "params.json";
    adjoint::fuzz::write("params/params.json", adjoint::fuzz::text(data, size));
    adjoint::app::Scene copy = original;
    try {
        adjoint::app::apply_params_file(copy, file);
    } catch (const adjoint::Error&) {   // SceneError among them
    }
    return 0;
}
