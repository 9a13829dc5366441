// What the loader fuzz targets share: a private folder, the input written into it, and a scene naming it.
#pragma once
#include <adjoint/app/image_io.h>
#include <adjoint/app/scene.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

namespace adjoint::fuzz {

inline constexpr const char* tri_obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nf 1/1 2/2 3/3\n";

// One folder per process (libFuzzer's -fork/-jobs run several), made once: a mesh for the scenes that fuzz
// views, an image their datasets may name, and the inputs written over and over. Beside them, small
// stand-ins under the names assets/scenes/*.json give (../meshes/*.obj, ../textures/*.png), so the scene
// seeds, loaded from scenes/, reach past their files into the rest of the loader.
inline const std::filesystem::path& folder() {
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("adjoint_fuzz_" + std::to_string(::getpid()));
        for (const char* sub : {"scenes", "meshes", "textures"}) std::filesystem::create_directories(d / sub);
        // Taken away at exit (the copy is constructed before the handler is registered, so it outlives it).
        static const std::string to_remove = d.string();
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(to_remove, ec);
        });
        std::ofstream(d / "tri.obj") << tri_obj;
        app::write_png(d / "r_0.png", app::Image(8, 8, 3));   // the image the seeds' datasets name
        for (const char* mesh : {"blob", "box", "plane", "quad", "torus_knot", "uv_sphere", "ico_sphere"})
            std::ofstream(d / "meshes" / (std::string(mesh) + ".obj")) << tri_obj;
        for (const char* texture : {"colourful_128", "colourful_256", "metal_rough_16", "metal_rough_64", "bumps_normal_64"})
            app::write_png(d / "textures" / (std::string(texture) + ".png"), app::Image(4, 4, 3, 0.5f));
        return d;
    }();
    return dir;
}

inline void write(const std::string& name, std::string_view bytes) {
    std::ofstream(folder() / name, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// A scene with one mesh (`file`, with `material`) and, when given, `views` (JSON text).
inline std::string scene_json(const std::string& file, const std::string& material, const std::string& views = "") {
    std::string s = R"({"format": 1, "camera": {"eye": [0, 0, 3], "target": [0, 0, 0], "resolution": [8, 8]},
      "materials": {"m": {"albedo": [0.5, 0.5, 0.5]}},
      "meshes": [{"name": "x", "file": ")" + file + R"(", "material": ")" + material + R"("}],
      "lights": [{"name": "sky", "type": "ambient"}])";
    if (!views.empty()) s += R"(, "views": )" + views;
    return s + "}";
}

// Loads the scene; the loader's errors are the expected outcome of most inputs. Anything else escapes (and
// libFuzzer reports it as a crash), as do the sanitizers' findings.
inline void load(std::string_view scene, const std::filesystem::path& base = folder()) {
    try {
        (void)app::load_scene_from_string(scene, base, "fuzz.json");
    } catch (const app::SceneError&) {
    } catch (const adjoint::Error&) {
    }
}

inline std::string_view text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

} // namespace adjoint::fuzz
