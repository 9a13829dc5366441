// Section `visibility`: ms per pose-recovery iteration (translation and rotation free: every iteration
// rasterizes, shades, differentiates through the vertices) for each visibility mode, at 256x256 with a
// 5k-triangle mesh and at 512x512 with a 50k one (soft at the scene format's sigma = gamma = 1e-4).
#include "bench.h"

#ifdef ADJOINT_BENCH_HAS_APP

#include <adjoint/app/optimization.h>

#include <cmath>
#include <filesystem>
#include <fstream>
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

std::string scene_json(const std::string& mesh, int res, const std::string& visibility) {
    return R"({ "format": 1,
      "camera": { "eye": [0, 0.6, 3.2], "target": [0, 0, 0], "fov_y": 40, "resolution": [)" +
           std::to_string(res) + ", " + std::to_string(res) + R"(] },
      "materials": { "clay": { "albedo": [0.8, 0.5, 0.3], "specular": [0.2, 0.2, 0.2], "shininess": 20 } },
      "meshes": [ { "name": "m", "file": ")" + mesh + R"(", "material": "clay", "scale": 0.8 } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 2], "intensity": 12 },
                  { "name": "fill", "type": "ambient", "intensity": 0.2 } ],
      "render": { "visibility": ")" + visibility + R"(", "soft": { "sigma": 1e-4, "gamma": 1e-4 } },
      "optimize": { "parameters": { "meshes.m.translation": { "perturb": 0.05 },
                                    "meshes.m.rotation": { "perturb": 10 } }, "iterations": 1000000 } })";
}

json one_case(Env& env, const fs::path& dir, const fs::path& mesh, int res) {
    json j;
    j["resolution"] = std::to_string(res) + "x" + std::to_string(res);
    Reps reps = env.reps({3, 15}, {1, 2});
    for (const char* vis : {"hard", "antialias", "soft"}) {
        try {
            auto scene = app::load_scene_from_string(scene_json(mesh.string(), res, vis), dir, "visibility.json");
            size_t tris = 0;
            for (const auto& m : scene.meshes) tris += m.triangles.size();
            j["triangles"] = tris;
            app::Optimizer opt(env.device(), scene);
            opt.step();   // first-use costs (pipelines) out of the measure
            j[vis] = measure(reps, [&] { opt.step(); }).to_json();
        } catch (const Error& e) {
            j[vis] = {{"available", false}, {"reason", e.what()}};
        }
    }
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
    if (env.quick())
        out["5k_96"] = one_case(env, dir, dir / "5k.obj", 96);
    else
        out["5k_256"] = one_case(env, dir, dir / "5k.obj", 256);
    if (!env.quick()) {
        write_lumpy_sphere(dir / "50k.obj", 224);   // 224 x 112 quads = 50,176 triangles
        out["50k_512"] = one_case(env, dir, dir / "50k.obj", 512);
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return out;
}

} // namespace adjoint::bench

#endif // ADJOINT_BENCH_HAS_APP
