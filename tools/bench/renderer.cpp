// Section `renderer`: ms per texture-recovery iteration of the differentiable renderer at 256x256 with a
// 5k-triangle mesh and at 512x512 with a 50k one: forward only, forward + backward, the whole iteration
// (with Adam); beside it, in the same run, the same iteration written in PyTorch (tools/bench/torch_texture.py,
// Debian's python3-torch), rasterization precomputed once on both sides; the cost of the material models, of an
// environment light (shadows: section `shadows`, shadows.cpp).
#include "bench.h"

#ifdef ADJOINT_BENCH_HAS_APP

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>


#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace adjoint::bench {

namespace fs = std::filesystem;

namespace {

// A UV sphere of seg x seg/2 quads (2 triangles each), with normals and texture coordinates.
void write_sphere(const fs::path& file, int seg) {
    std::ofstream o(file);
    int rings = seg / 2;
    for (int r = 0; r <= rings; ++r)
        for (int s = 0; s <= seg; ++s) {
            double th = M_PI * r / rings, ph = 2 * M_PI * s / seg;
            double x = std::sin(th) * std::cos(ph), y = std::cos(th), z = std::sin(th) * std::sin(ph);
            o << "v " << x << " " << y << " " << z << "\nvn " << x << " " << y << " " << z << "\nvt "
              << double(s) / seg << " " << 1.0 - double(r) / rings << "\n";
        }
    auto id = [&](int r, int s) { return r * (seg + 1) + s + 1; };
    for (int r = 0; r < rings; ++r)
        for (int s = 0; s < seg; ++s) {
            int a = id(r, s), b = id(r + 1, s), c = id(r + 1, s + 1), d = id(r, s + 1);
            o << "f " << a << "/" << a << "/" << a << " " << b << "/" << b << "/" << b << " " << c << "/" << c << "/"
              << c << "\n";
            o << "f " << a << "/" << a << "/" << a << " " << c << "/" << c << "/" << c << " " << d << "/" << d << "/"
              << d << "\n";
        }
}

// `texture`: the free texture's resolution (0: the file's, 128x128); the target is the 128x128 texture's image.
std::string scene_json(const std::string& mesh, int res, int texture = 0) {
    const std::string resolution =
        texture ? R"(, "resolution": [)" + std::to_string(texture) + ", " + std::to_string(texture) + "]" : "";
    const fs::path assets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
    return R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "fov_y": 38, "resolution": [)" +
           std::to_string(res) + ", " + std::to_string(res) + R"(] },
      "background": [0.05, 0.05, 0.08],
      "materials": { "skin": { "albedo_texture": ")" +
           (assets / "textures" / "colourful_128.png").string() + R"(", "specular": [0.04, 0.04, 0.04], "shininess": 32 } },
      "meshes": [ { "name": "m", "file": ")" + mesh + R"(", "material": "skin" } ],
      "lights": [ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 },
                  { "name": "fill", "type": "ambient", "intensity": 0.25 } ],
      "optimize": { "parameters": { "materials.skin.albedo_texture": { "init": [0.5, 0.5, 0.5], "lr": 0.03)" +
           resolution + R"( } },
                    "iterations": 1000000 } })";
}

// The G-buffer the PyTorch peer starts from: per-pixel uv, position, normal, coverage and the target; its texture
// is texture x texture (0: the scene's first texture's size).
void write_gbuffer(Env& env, const app::Scene& scene, const fs::path& file, uint32_t texture) {
    Device& device = env.device();
    const std::vector<app::SurfaceSample> s = app::rasterize_view(device, scene, 0);
    const app::Camera& view = scene.views[0];
    const size_t n = s.size();
    app::SceneRenderer truth(device, scene);
    auto target = truth.render(0);
    std::ofstream o(file, std::ios::binary);
    uint32_t head[4] = {view.width, view.height, texture ? texture : scene.textures[0].width,
                        texture ? texture : scene.textures[0].height};
    o.write(reinterpret_cast<const char*>(head), sizeof head);
    const auto& L = scene.lights[0];
    float light[8] = {L.position.x, L.position.y, L.position.z, L.intensity,
                      scene.camera.eye.x, scene.camera.eye.y, scene.camera.eye.z, scene.lights[1].intensity};
    o.write(reinterpret_cast<const char*>(light), sizeof light);
    auto put = [&](float v) { o.write(reinterpret_cast<const char*>(&v), 4); };
    for (auto& p : s) put(p.covered ? p.uv.x : 0.0f), put(p.covered ? p.uv.y : 0.0f);
    for (auto& p : s) put(p.position.x), put(p.position.y), put(p.position.z);
    for (auto& p : s) put(p.normal.x), put(p.normal.y), put(p.normal.z);
    for (auto& p : s) put(p.covered ? 1.0f : 0.0f);
    for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) put(s[i].covered ? target.texels[i][c] : 0.0f);
}

json torch_peer(const fs::path& gbuffer, int iters, long threads, const std::string& model,
               const std::string& pixels) {
    std::string script = std::string(ADJOINT_SOURCE_DIR) + "/tools/bench/torch_texture.py";
    // Debian's interpreter, where python3-torch installs (a user's PATH may lead elsewhere).
    std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    std::string cmd = python + " " + script + " " + gbuffer.string() + " " + std::to_string(iters) + " " +
                      std::to_string(threads) + " " + model + " " + pixels + " 2>/dev/null";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        while (size_t k = fread(buf, 1, sizeof buf, p)) out.append(buf, k);
        pclose(p);
    }
    try {
        return json::parse(out);
    } catch (...) {
        return {{"available", false}, {"reason", "the PyTorch peer printed no JSON: " + out.substr(0, 200)}};
    }
}

// The PyTorch peers, each at 1 thread and at every core (PyTorch's spinning threads lose to one on a busy machine):
// the bench's loop (`phong` over every pixel, what Adjoint's iteration shades), the Lambert-only loop of issue 22
// (every pixel), against the stronger of which the target is set; and, reported beside them, a Lambert loop over
// the covered pixels only (gathered once), the leanest a PyTorch user would write. Its level-0 bilinear lookup does
// less than Adjoint's mip-mapped one (a mip chain built and differentiated every iteration). `beside` runs before
// each peer and after the last: Adjoint's iterations measured in the same stretch of time as the peers'.
json torch_peers(const fs::path& gbuffer, int iters, bool quick, const std::function<void()>& beside) {
    std::vector<long> thread_counts = {1};
    if (long cores = sysconf(_SC_NPROCESSORS_ONLN); cores > 1 && !quick) thread_counts.push_back(cores);
    json runs = json::array(), strongest, lean;
    for (auto [model, pixels] : {std::pair{"phong", "all"}, {"lambert", "all"}, {"lambert", "covered"}})
        for (long threads : thread_counts) {
            beside();
            json t = torch_peer(gbuffer, iters, threads, model, pixels);
            if (!t.value("available", false)) return {{"available", false}, {"reason", t.value("reason", "")}};
            json& best = std::string(pixels) == "all" ? strongest : lean;
            if (best.is_null() || t["ms_median"].get<double>() < best["ms_median"].get<double>()) best = t;
            runs.push_back(std::move(t));
        }
    beside();
    return {{"available", true}, {"runs", runs}, {"strongest", strongest}, {"covered_pixels_only", lean}};
}

// Where an iteration's device time goes: `runs` calls of `step` with the engine's kernel profiling on, per kernel
// its dispatches and milliseconds an iteration and its share (runtime/profile.h), slowest first.
json kernel_profile(Device& device, int runs, const std::function<void()>& step) {
    clear_kernel_times(device);
    set_kernel_profiling(device, true);
    for (int i = 0; i < runs; ++i) step();
    set_kernel_profiling(device, false);
    const std::vector<KernelTime> times = kernel_times(device);
    clear_kernel_times(device);
    double total = 0.0;
    for (const KernelTime& t : times) total += t.ms;
    json rows = json::array();
    for (const KernelTime& t : times)
        rows.push_back({{"kernel", t.kernel}, {"dispatches_per_iteration", double(t.dispatches) / runs},
                        {"ms_per_iteration", t.ms / runs}, {"share", total > 0 ? t.ms / total : 0.0}});
    return {{"what", "device time per kernel (timestamps around each dispatch), over " + std::to_string(runs) +
                         " iterations"},
            {"device_ms_per_iteration", total / runs}, {"by_kernel", rows}};
}

// `texture`: as scene_json's; `pytorch_target`: the ratio to the stronger PyTorch peer that is checked (0: none,
// reported only).
json one_case(Env& env, const std::string& label, const std::string& mesh, int res, bool with_torch,
              bool samples = false, int texture = 0, double pytorch_target = 3.0) {
    Device& device = env.device();
    char dir_template[] = "/tmp/adjoint-bench-XXXXXX";
    fs::path dir = mkdtemp(dir_template);
    auto scene = app::load_scene_from_string(scene_json(mesh, res, texture), dir, label + ".json");
    size_t tris = 0;
    for (const auto& m : scene.meshes) tris += m.triangles.size();
    json j;
    j["resolution"] = std::to_string(res) + "x" + std::to_string(res);
    j["triangles"] = tris;
    const std::string side = std::to_string(texture ? texture : 128);
    j["texture"] = side + "x" + side + " RGB, free (texture recovery, one view)";

    Reps reps = env.reps({3, 20}, {1, 3});
    auto t0 = Clock::now();
    app::SceneRenderer renderer(device, scene);
    j["setup_ms"] = ms_since(t0);   // upload, rasterization (once: nothing moves the geometry), compile
    auto fwd = measure(reps, [&] { renderer.render(0); });
    app::Optimizer opt(device, scene);
    auto fb = measure(reps, [&] { opt.evaluate(nullptr); });
    auto it = measure(reps, [&] { opt.step(); });
    j["forward"] = fwd.to_json();
    j["forward"]["what"] = "mip chain + shading of every pixel + the image read back";
    j["forward_backward"] = fb.to_json();
    j["forward_backward"]["what"] = "mip chain + shading of the covered pixels + loss + $autodiff backward "
                                    "(gradients scattered into the texture) + mip gradients gathered into the "
                                    "parameter buffer + loss sums read back";
    j["iteration"] = it.to_json(samples);
    j["iteration"]["what"] = "forward_backward + parameter sums + Adam + the reported scalars read back";
    j["iteration"]["kernels"] = kernel_profile(device, env.quick() ? 2 : 10, [&] { opt.step(); });
    double ratio = (it.median() - fwd.median()) / fwd.median();
    j["backward_and_adam_over_forward"] = ratio;
    j["check_backward"] = env.target("renderer", label + ": (iteration - forward) / forward", ratio, "<=", 3.0, "ratio");
    if (with_torch) {
        write_gbuffer(env, scene, dir / "gbuffer.bin", uint32_t(texture));
        // The ratio takes Adjoint's iterations measured between the peers' runs (3 unmeasured, then 5, before
        // each and after the last), not the ones above: a peer runs for a second or so, and the machine's speed
        // changes over the half minute the peers take (one run measured Adjoint at 3.9 ms before them and the
        // next runs at 1.8-2.2 ms, the peers alike).
        Samples beside;
        auto step_beside = [&] { beside.add(measure({3, env.quick() ? 1 : 5}, [&] { opt.step(); })); };
        json t = torch_peers(dir / "gbuffer.bin", env.quick() ? 5 : 50, env.quick(), step_beside);
        j["pytorch"] = t;
        j["iteration_beside_pytorch"] = beside.to_json(samples);
        j["iteration_beside_pytorch"]["what"] = "the iteration, measured before each PyTorch peer's run and after the last";
        if (t.value("available", false)) {
            double speedup = t["strongest"]["ms_median"].get<double>() / beside.median();
            j["pytorch_over_adjoint_iteration"] = speedup;
            if (pytorch_target > 0)
                j["check_pytorch"] = env.target("renderer", label + ": the stronger PyTorch peer's iteration / Adjoint's",
                                                speedup, ">=", pytorch_target, "ratio");
            j["pytorch_covered_pixels_only_over_adjoint_iteration"] =
                t["covered_pixels_only"]["ms_median"].get<double>() / beside.median();
        }
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return j;
}

constexpr const char* kThreeLights = R"([ { "name": "key", "type": "point", "position": [2, 3, 3], "intensity": 14 },
                  { "name": "sun", "type": "directional", "direction": [0.5, -1, -0.5], "intensity": 1 },
                  { "name": "fill", "type": "ambient", "intensity": 0.25 } ])";

// The same torus under `lights` (by default a point light, a sun and an ambient light), its material phong or
// pbr with every value free (and `extra` parameters): the cost of the material model and of the lights per
// iteration, side by side in one run.
json material_case(Env& env, const std::string& model, const std::string& lights = kThreeLights,
                   const std::string& extra = "") {
    const fs::path assets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
    const bool pbr = model == "pbr";
    const std::string material = pbr ? R"({"model": "pbr", "base_color": [0.8, 0.4, 0.2], "metallic": 0.6, "roughness": 0.4})"
                                     : R"({"albedo": [0.8, 0.4, 0.2], "specular": [0.3, 0.3, 0.3], "shininess": 24})";
    const std::string free = pbr ? R"("materials.m.base_color": {"init": [0.5, 0.5, 0.5]}, "materials.m.metallic": {"init": 0.2},
                                      "materials.m.roughness": {"init": 0.7})"
                                 : R"("materials.m.albedo": {"init": [0.5, 0.5, 0.5]}, "materials.m.specular": {"init": [0.1, 0.1, 0.1]},
                                      "materials.m.shininess": {"init": 10})";
    const std::string text = R"({"format": 1,
      "camera": { "eye": [0, 0.8, 4.2], "target": [0, 0, 0], "fov_y": 38, "resolution": [256, 256] },
      "materials": { "m": )" + material + R"( },
      "meshes": [ { "name": "m", "file": ")" + (assets / "meshes" / "torus_knot.obj").string() + R"(", "material": "m" } ],
      "lights": )" + lights + R"(,
      "optimize": { "parameters": { )" + free + extra + R"( }, "iterations": 1000000 } })";
    auto scene = app::load_scene_from_string(text, assets, model + ".json");
    Device& device = env.device();
    Reps reps = env.reps({3, 20}, {1, 3});
    app::SceneRenderer renderer(device, scene);
    auto fwd = measure(reps, [&] { renderer.render(0); });
    app::Optimizer opt(device, scene);
    auto it = measure(reps, [&] { opt.step(); });
    json j;
    j["forward"] = fwd.to_json();
    j["iteration"] = it.to_json();
    j["backward_and_adam_over_forward"] = (it.median() - fwd.median()) / fwd.median();
    return j;
}

} // namespace

// The 5k_256 case alone, without the PyTorch peer, the iteration's samples listed: the bench side of
// tools/bench/loss_csv_vs_bench.sh, which pools them against the `ms` column of adjoint-optimize's loss.csv on
// the same scene (tools/bench/texture_5k_256.json).
json bench_renderer_texture(Env& env) {
    const fs::path assets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
    return one_case(env, "5k triangles at 256x256", (assets / "meshes" / "torus_knot.obj").string(), 256, false, true);
}

json bench_renderer(Env& env) {
    json out;
    const fs::path assets = fs::path(ADJOINT_SOURCE_DIR) / "assets";
    out["5k_256"] = one_case(env, "5k triangles at 256x256", (assets / "meshes" / "torus_knot.obj").string(), 256, true);
    // The same with a 512x512 texture free: every iteration's per-texel work (the step, the mip chain and its
    // gradient) grows with the texture, PyTorch's bilinear lookup and Adam less so. Reported, not checked.
    out["5k_256_texture_512"] = one_case(env, "5k triangles at 256x256, 512x512 texture",
                                         (assets / "meshes" / "torus_knot.obj").string(), 256, true, false, 512, 0);
    json phong = material_case(env, "phong"), pbr = material_case(env, "pbr");
    out["materials_5k_256"] = {
        {"what", "5k-triangle torus at 256x256 under a point light, a sun and an ambient light; the material's values "
                 "free (phong: albedo, specular, shininess; pbr: base_color, metallic, roughness); hard visibility"},
        {"phong", phong},
        {"pbr", pbr},
        {"pbr_over_phong_iteration", pbr["iteration"]["median_ms"].get<double>() / phong["iteration"]["median_ms"].get<double>()},
        {"check_pbr_backward", env.target("renderer", "pbr: (iteration - forward) / forward",
                                          pbr["backward_and_adam_over_forward"].get<double>(), "<=", 3.0, "ratio")}};
    {
        const std::string sky = (assets / "environments" / "courtyard.exr").string();
        const std::string environment = R"([ { "name": "sky", "type": "environment", "file": ")" + sky + R"(" } ])";
        json ambient = material_case(env, "pbr", R"([ { "name": "sky", "type": "ambient" } ])");
        json lit = material_case(env, "pbr", environment);
        json map_free = material_case(env, "pbr", environment,
                                      R"(, "lights.sky.texture": {"init": [0.5, 0.5, 0.5], "resolution": [64, 32]})");
        const double pixels = 256.0 * 256.0;
        out["environment_5k_256"] = {
            {"what", "the same torus, pbr with its values free, lit by one light from every direction: a flat ambient "
                     "light, the courtyard HDR map (1024x512; prefiltered once), and a 64x32 map that is itself free "
                     "(prefiltered, and its prefiltering differentiated, every iteration)"},
            {"pbr_ambient", ambient},
            {"pbr_environment", lit},
            {"pbr_environment_map_free", map_free},
            {"pbr_environment_over_phong_iteration",
             lit["iteration"]["median_ms"].get<double>() / phong["iteration"]["median_ms"].get<double>()},
            {"environment_forward_ns_per_pixel",
             (lit["forward"]["median_ms"].get<double>() - ambient["forward"]["median_ms"].get<double>()) * 1e6 / pixels},
            {"environment_iteration_ns_per_pixel",
             (lit["iteration"]["median_ms"].get<double>() - ambient["iteration"]["median_ms"].get<double>()) * 1e6 / pixels},
            {"check_environment_backward",
             env.target("renderer", "pbr + environment: (iteration - forward) / forward",
                        lit["backward_and_adam_over_forward"].get<double>(), "<=", 3.0, "ratio")}};
    }
    if (!env.quick()) {
        char dir_template[] = "/tmp/adjoint-bench-mesh-XXXXXX";
        fs::path dir = mkdtemp(dir_template);
        write_sphere(dir / "dense.obj", 224);   // 224 x 112 quads = 50,176 triangles
        out["50k_512"] = one_case(env, "50k triangles at 512x512", (dir / "dense.obj").string(), 512, false);
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    return out;
}

} // namespace adjoint::bench

#endif // ADJOINT_BENCH_HAS_APP
