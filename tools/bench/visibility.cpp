// Section `visibility`: ms per pose-recovery iteration (translation and rotation free: every iteration
// rasterizes, shades, differentiates through the vertices) for each visibility mode, at 256x256 with a
// 5k-triangle mesh and at 512x512 with a 50k one (soft at SoftRas's sigma = gamma = 1e-4; the scene format's
// default gamma is 0.1), soft exact and with faces_per_pixel 8 (each pixel blends the 8 that weigh most).
#include "bench.h"

#ifdef ADJOINT_BENCH_HAS_APP

#include <adjoint/app/optimization.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <unistd.h>

namespace adjoint::bench {

namespace fs = std::filesystem;

namespace {

// A UV sphere of seg x seg/2 quads (2 triangles each) with normals, deformed into a lumpy shape so that a
// rotation shows.
void write_lumpy_sphere(const fs::path& file, int seg) {
    std::ofstream o(file);
    int rings = seg / 2;
    for (int r = 0; r <= rings; ++r)
        for (int s = 0; s <= seg; ++s) {
            double th = M_PI * r / rings, ph = 2 * M_PI * s / seg;
            double x = std::sin(th) * std::cos(ph), y = std::cos(th), z = std::sin(th) * std::sin(ph);
            double k = 1 + 0.2 * std::sin(3 * x + 1) * std::cos(2 * y);
            o << "v " << x * k << " " << y * k << " " << z * k << "\n";
        }
    auto id = [&](int r, int s) { return r * (seg + 1) + s + 1; };
    for (int r = 0; r < rings; ++r)
        for (int s = 0; s < seg; ++s) {
            int a = id(r, s), b = id(r + 1, s), c = id(r + 1, s + 1), d = id(r, s + 1);
            o << "f " << a << " " << b << " " << c << "\nf " << a << " " << c << " " << d << "\n";
        }
}

// `faces`: render.soft.faces_per_pixel (0: none, the exact blend).
std::string scene_json(const std::string& mesh, int res, const std::string& visibility, int faces) {
    return R"({ "format": 1,
      "camera": { "eye": [0, 0.6, 3.2], "target": [0, 0, 0], "fov_y": 40, "resolution": [)" +
           std::to_string(res) + ", " + std::to_string(res) + R"(] },
      "materials": { "clay": { "albedo": [0.8, 0.5, 0.3], "specular": [0.2, 0.2, 0.2], "shininess": 20 } },
      "meshes": [ { "name": "m", "file": ")" + mesh + R"(", "material": "clay", "scale": 0.8 } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 2], "intensity": 12 },
                  { "name": "fill", "type": "ambient", "intensity": 0.2 } ],
      "render": { "visibility": ")" + visibility + R"(", "soft": { "sigma": 1e-4, "gamma": 1e-4)" +
           (faces ? ", \"faces_per_pixel\": " + std::to_string(faces) : std::string()) + R"( } },
      "optimize": { "parameters": { "meshes.m.translation": { "perturb": 0.05 },
                                    "meshes.m.rotation": { "perturb": 10 } }, "iterations": 1000000 } })";
}

// `texture`: a texture-recovery scene whose iteration is measured in the same rounds (empty: none).
json one_case(Env& env, const fs::path& dir, const fs::path& mesh, int res, const std::string& label,
              const fs::path& texture = {}) {
    json j;
    j["resolution"] = std::to_string(res) + "x" + std::to_string(res);
    Reps reps = env.reps({3, 15}, {1, 2});
    // The soft blend of the 8 triangles that weigh most at each pixel (render.soft.faces_per_pixel).
    constexpr int kFaces = 8;
    // The modes' iterations measured in turn, a round at a time (measure_interleaved): the ratios below compare
    // iterations that met the same load.
    std::vector<std::unique_ptr<app::Optimizer>> optimizers;
    std::vector<const char*> modes;
    std::vector<std::function<void()>> steps;
    auto add = [&](const char* mode, const app::Scene& scene) {
        optimizers.push_back(std::make_unique<app::Optimizer>(env.device(), scene));
        optimizers.back()->step();   // first-use costs (pipelines) out of the measure
        modes.push_back(mode);
        steps.push_back([opt = optimizers.back().get()] { opt->step(); });
    };
    for (const char* mode : {"hard", "antialias", "soft", "soft_faces_8"}) {
        const bool faces = std::string(mode) == "soft_faces_8";
        const char* vis = faces ? "soft" : mode;
        try {
            auto scene = app::load_scene_from_string(scene_json(mesh.string(), res, vis, faces ? kFaces : 0), dir,
                                                     "visibility.json");
            size_t tris = 0;
            for (const auto& m : scene.meshes) tris += m.triangles.size();
            j["triangles"] = tris;
            add(mode, scene);
        } catch (const Error& e) {
            j[mode] = {{"available", false}, {"reason", e.what()}};
        }
    }
    if (!texture.empty()) try {
        add("texture", app::load_scene(texture));
    } catch (const Error& e) {
        j["texture"] = {{"available", false}, {"reason", e.what()}};
    }
    const std::vector<Samples> samples = measure_interleaved(reps, steps);
    for (size_t k = 0; k < modes.size(); ++k) j[modes[k]] = samples[k].to_json();
    // Issue 22's ratios, side by side in this run (not of the smoke run's small, few repetitions).
    auto ms = [&](const char* vis) {
        return !env.quick() && j[vis].contains("median_ms") ? j[vis]["median_ms"].get<double>() : 0.0;
    };
    if (ms("hard") > 0 && ms("antialias") > 0)
        j["check_antialias_over_hard"] = env.target("visibility", label + ": antialias / hard iteration",
                                                    ms("antialias") / ms("hard"), "<=", 1.3, "ratio");
    if (ms("antialias") > 0 && ms("soft") > 0)
        j["check_soft_over_antialias"] = env.target("visibility", label + ": soft / antialias iteration",
                                                    ms("soft") / ms("antialias"), "<=", 3.0, "ratio");
    if (ms("antialias") > 0 && ms("soft_faces_8") > 0)
        j["check_soft_faces_8_over_antialias"] =
            env.target("visibility", label + ": soft (faces_per_pixel 8) / antialias iteration",
                       ms("soft_faces_8") / ms("antialias"), "<=", 3.0, "ratio");
    j["what"] = "one iteration: vertex stage + rasterization + shading (+ antialiasing or soft blending) + loss + "
                "$autodiff backward through the vertices + Adam + the reported scalars read back";
    return j;
}

} // namespace

json bench_visibility(Env& env) {
    json out;
    char dir_template[] = "/tmp/adjoint-bench-vis-XXXXXX";
    fs::path dir = mkdtemp(dir_template);
    write_lumpy_sphere(dir / "5k.obj", 70);     // 70 x 35 quads = 4,900 triangles
    // The smoke run (--quick) renders small: it checks that every mode runs, not how fast.
    if (env.quick()) {
        out["5k_96"] = one_case(env, dir, dir / "5k.obj", 96, "5k at 96x96");
    } else {
        // The texture path's iteration at the same size (the renderer section's 5k scene as a file), measured in
        // the same rounds as the pose iterations.
        out["5k_256"] = one_case(env, dir, dir / "5k.obj", 256, "5k at 256x256",
                                 fs::path(ADJOINT_SOURCE_DIR) / "tools" / "bench" / "texture_5k_256.json");
        const json c = out["5k_256"];   // a copy: adding to `out` below moves its members
        if (c.contains("texture") && c["texture"].contains("median_ms")) {
            const double tex_ms = c["texture"]["median_ms"].get<double>();
            out["texture_iteration_5k_256_ms"] = tex_ms;
            if (c["antialias"].contains("median_ms"))
                out["check_antialias_over_texture"] = env.target(
                    "visibility", "5k at 256x256: antialias pose iteration / texture iteration",
                    c["antialias"]["median_ms"].get<double>() / tex_ms, "<", 4.0, "ratio");
        }
        write_lumpy_sphere(dir / "50k.obj", 224);   // 224 x 112 quads = 50,176 triangles
        out["50k_512"] = one_case(env, dir, dir / "50k.obj", 512, "50k at 512x512");
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return out;
}

} // namespace adjoint::bench

#endif // ADJOINT_BENCH_HAS_APP
