// Each stage of the renderer on its own: its backward (from $autodiff) against central differences of its own
// forward, with the stages before it held fixed. f = sum of w . output for fixed random weights w, so the seed of
// the backward pass is w. The vertex stage, shading, antialiasing and the loss here; soft rasterization (a stage
// that replaces rasterize + shade + antialias) in soft_gradient_test.cpp.
#include "support/device_fixture.h"

#include "optim/loss_kernels.h"
#include "render/antialias_stage.h"
#include "render/shade_stage.h"
#include "render/shadow_grid.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace adjoint::test {

namespace {

// 32x32: a vertex-coloured ico-sphere whose vertices and placement are free (so its normals are recomputed from
// them) over a floor, a point, a directional and an ambient light.
const char* kScene = R"({
  "format": 1,
  "camera": { "eye": [0.3, 0.8, 3.2], "target": [0, 0, 0], "fov_y": 40, "resolution": [32, 32] },
  "background": [0.1, 0.12, 0.15],
  "materials": {
    "ball":  { "albedo": [0.8, 0.5, 0.3], "specular": [0.2, 0.2, 0.2], "shininess": 20 },
    "floor": { "albedo": [0.3, 0.4, 0.6] }
  },
  "meshes": [
    { "name": "ball", "file": "meshes/ico_sphere.obj", "material": "ball", "scale": 0.7, "vertex_colors": true,
      "rotation": { "axis": [0.3, 1, 0.2], "angle": 20 }, "translation": [0.05, 0.02, 0] },
    { "name": "floor", "file": "meshes/plane.obj", "material": "floor", "translation": [0, -1.0, 0] }
  ],
  "lights": [
    { "name": "key",  "type": "point", "position": [1.5, 2.5, 2], "color": [1, 0.9, 0.8], "intensity": 9 },
    { "name": "sun",  "type": "directional", "direction": [-0.5, -1, -0.3], "intensity": 0.5 },
    { "name": "fill", "type": "ambient", "color": [1, 1, 1], "intensity": 0.2 }
  ],
  "render": { "visibility": "antialias" },
  "optimize": { "target": "scene", "parameters": { "meshes.ball.vertices": { "perturb": 0.01 },
    "meshes.ball.translation": { "perturb": 0.01 }, "meshes.ball.rotation": { "perturb": 1 },
    "meshes.ball.scale": { "perturb": 0.01 } } }
})";

std::vector<float> weights(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> w(n);
    for (auto& x : w) x = u(rng);
    return w;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
    return s;
}

// The indices of the k largest magnitudes.
std::vector<size_t> largest(const std::vector<float>& g, size_t k) {
    std::vector<size_t> order(g.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    k = std::min(k, order.size());
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    order.resize(k);
    return order;
}

// Central difference of f along element i of the host copy x (uploaded through `set`), x left as it was.
template <typename F, typename Set>
double central(std::vector<float>& x, size_t i, double h, F&& f, Set&& set) {
    const float x0 = x[i];
    x[i] = float(x0 + h);
    set(x);
    const double fp = f();
    x[i] = float(x0 - h);
    set(x);
    const double fm = f();
    x[i] = x0;
    set(x);
    return (fp - fm) / (double(float(x0 + h)) - double(float(x0 - h)));
}

// The device state the dynamic stages read, built the way DynamicRenderer builds it.
class StageRig : public DeviceTest {
protected:
    explicit StageRig(const std::string& text = kScene)
        : scene(app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets",
                                            "stages.json")) {}
    app::Scene scene;
    app::SceneData data = app::upload_scene(device, stream, scene);
    app::GeometryStage geometry{device, stream, scene, data.layout};
    app::WorldVertices world{device.create_diff_buffer<float3>(geometry.vertex_count()),
                             device.create_diff_buffer<float3>(geometry.vertex_count()),
                             device.create_diff_buffer<float3>(geometry.vertex_count())};
    Buffer<app::gpu::ViewRec> views = app::upload(device, stream, app::view_records(scene, data.layout));
    app::ShadowGrid shadow_grid{device, stream, data};
    app::StageBuffers buffers{data, world, views, geometry.tables(), shadow_grid.buffers()};
    std::vector<float> values = app::gather_values(scene, data.layout);
    DiffBuffer<float> params = device.create_diff_buffer<float>(values.size());
    const uint32_t width = scene.views[0].width, height = scene.views[0].height, pixels = width * height;

    void SetUp() override {
        stream << params.value.copy_from(values.data());
        geometry.forward(stream, params.value, world);
        stream << synchronize();
    }

    template <typename T>
    std::vector<T> read(const Buffer<T>& b) {
        std::vector<T> out(b.size());
        stream << b.copy_to(out.data()) << synchronize();
        return out;
    }
    static std::vector<float> flat(const std::vector<float3>& v) {
        std::vector<float> out;
        for (const float3& x : v) out.insert(out.end(), {x.x, x.y, x.z});
        return out;
    }
    static std::vector<float> flat(const std::vector<float4>& v) {
        std::vector<float> out;
        for (const float4& x : v) out.insert(out.end(), {x.x, x.y, x.z, x.w});
        return out;
    }
    void upload3(const Buffer<float3>& b, const std::vector<float>& x) {
        std::vector<float3> v(x.size() / 3);
        for (size_t i = 0; i < v.size(); ++i) v[i] = float3(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
        stream << b.copy_from(v.data()) << synchronize();
    }
    app::GBuffer rasterize() {
        app::DeviceGeometry g = data.geometry;
        g.positions = world.positions.value;
        g.normals = world.normals.value;
        g.colors = world.colors.value;
        app::ViewCamera vc{app::view_projection_matrix(scene.views[0]), scene.views[0].eye, width, height};
        return app::Rasterizer(device).rasterize(stream, g, vc);
    }
    Buffer<float4> image() { return device.create_buffer<float4>(pixels); }
    // The antialias stage's input: the rasterized view and its shaded colours (the stage blends them).
    struct Shaded {
        app::GBuffer gb;
        DiffBuffer<float4> colors;
    };
    Shaded shaded() {
        Shaded s{rasterize(), device.create_diff_buffer<float4>(pixels)};
        app::ShadeStage(device, data.shading, false)
            .forward(stream, buffers, 0, s.gb, params.value, s.colors.value);
        stream << synchronize();   // before the shading stage and its kernels go
        return s;
    }
};

// The rig's scene at a size whose rows are not whole runs of the antialias stage's pairs kernel (16 pixels).
class OddSizeStageRig : public StageRig {
protected:
    OddSizeStageRig() : StageRig(odd_size()) {}
    static std::string odd_size() {
        std::string text = kScene;
        const std::string from = R"("resolution": [32, 32])";
        return text.replace(text.find(from), from.size(), R"("resolution": [37, 23])");
    }
};

// The rig's scene with a textured phong floor and a pbr ball without textures or vertex colours: one model samples
// its texture, the other has none to sample (PlannedModel::textures), and no mesh has colours to read
// (ShadingPlan::vertex_colors).
class TexturedStageRig : public StageRig {
protected:
    TexturedStageRig() : StageRig(textured()) {}
    static std::string textured() {
        std::string text = kScene;
        auto replace = [&](const std::string& from, const std::string& to) {
            text.replace(text.find(from), from.size(), to);
        };
        replace(R"("ball":  { "albedo": [0.8, 0.5, 0.3], "specular": [0.2, 0.2, 0.2], "shininess": 20 })",
                R"("ball":  { "model": "pbr", "base_color": [0.8, 0.5, 0.3], "roughness": 0.4 })");
        replace(R"("floor": { "albedo": [0.3, 0.4, 0.6] })",
                R"("floor": { "albedo_texture": "textures/colourful_128.png" })");
        replace(R"("vertex_colors": true,)", "");
        return text;
    }
};

} // namespace

TEST_F(StageRig, VertexStageMatchesCentralDifferences) {
    // f = w . (world positions, normals, colours) as functions of the parameter buffer.
    const size_t n = 3 * geometry.vertex_count();
    const auto wp = weights(n, 1), wn = weights(n, 2), wc = weights(n, 3);
    auto f = [&] {
        geometry.forward(stream, params.value, world);
        return dot(flat(read(world.positions.value)), wp) + dot(flat(read(world.normals.value)), wn) +
               dot(flat(read(world.colors.value)), wc);
    };
    stream << params.grad.fill_zero() << world.positions.grad.copy_from(wp.data())
           << world.normals.grad.copy_from(wn.data()) << world.colors.grad.copy_from(wc.data());
    geometry.backward(stream, params, world);
    const std::vector<float> g = read(params.grad);
    auto set = [&](const std::vector<float>& x) { stream << params.value.copy_from(x.data()) << synchronize(); };
    // The ball's placement (translation 3, raw quaternion 4, scale 3) and its 12 largest vertex gradients.
    std::vector<size_t> check;
    for (uint32_t k = 0; k < 3; ++k) check.push_back(data.layout.at(app::ParameterKind::mesh_translation, 0) + k);
    for (uint32_t k = 0; k < 4; ++k) check.push_back(data.layout.at(app::ParameterKind::mesh_rotation, 0) + k);
    for (uint32_t k = 0; k < 3; ++k) check.push_back(data.layout.at(app::ParameterKind::mesh_scale, 0) + k);
    std::vector<float> vertex_grads(g.begin() + data.layout.at(app::ParameterKind::mesh_vertices, 0),
                                    g.begin() + data.layout.at(app::ParameterKind::mesh_vertices, 0) + 3 * scene.meshes[0].obj_positions.size());
    for (size_t i : largest(vertex_grads, 12)) check.push_back(data.layout.at(app::ParameterKind::mesh_vertices, 0) + i);
    int nonzero = 0;
    for (size_t i : check) {
        const double fd = central(values, i, 1e-2, f, set);
        EXPECT_NEAR(g[i], fd, 1e-2 * std::max(std::fabs(fd), 1.0)) << "parameter float " << i;
        nonzero += std::fabs(fd) > 1e-3;
    }
    EXPECT_GE(nonzero, 16);

    // Where only the vertices are free, the placement's reads are detached (VertexPlan): no gradient reaches its
    // slots, and the vertices' gradient is the same.
    app::Scene vertices_only = scene;
    std::erase_if(vertices_only.optimize->parameters,
                  [](const app::Parameter& p) { return p.kind != app::ParameterKind::mesh_vertices; });
    app::GeometryStage shape(device, stream, vertices_only, data.layout);
    stream << params.grad.fill_zero();
    shape.backward(stream, params, world);
    const std::vector<float> g_shape = read(params.grad);
    // (The plan is per kind, over every mesh: the floor's vertex slots get their gradient too.)
    auto is_vertex = [&](size_t i) {
        for (uint32_t m = 0; m < scene.meshes.size(); ++m) {
            const uint32_t first = data.layout.at(app::ParameterKind::mesh_vertices, m);
            if (i >= first && i < first + 3 * scene.meshes[m].obj_positions.size()) return true;
        }
        return false;
    };
    for (size_t i = 0; i < g.size(); ++i) {
        const bool vertex = is_vertex(i);
        if (vertex)
            EXPECT_NEAR(g_shape[i], g[i], 1e-5 * std::max(std::fabs(g[i]), 1.0f)) << "parameter float " << i;
        else
            EXPECT_EQ(g_shape[i], 0.0f) << "parameter float " << i;
    }
}

// A mesh whose normals the loader computed from its faces, its vertices fixed (a pose optimization), reads its
// normals as a file's own, computed once from its positions as they are (here moved away from the file's, as
// params.json may): the vertex stage loops over none of its faces, and its world normals are those the stage with
// free vertices recomputes from the same positions each render.
TEST_F(StageRig, FixedVerticesReadNormalsComputedFromTheirPositions) {
    std::string text = kScene;
    text.replace(text.find("ico_sphere"), std::string("ico_sphere").size(), "blob");   // an OBJ without normals
    const app::Scene free = app::load_scene_from_string(text, std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets",
                                                        "blob.json");
    ASSERT_TRUE(free.meshes[0].normals_computed);
    app::Scene pose = free;
    std::erase_if(pose.optimize->parameters,
                  [](const app::Parameter& p) { return p.kind == app::ParameterKind::mesh_vertices; });
    for (float3& p : pose.meshes[0].obj_positions) p = float3(p.x * 1.4f, p.y, p.z + 0.3f * p.x * p.x);
    const app::ParamLayout layout = app::make_layout(free);
    app::GeometryStage recompute(device, stream, free, layout), fixed(device, stream, pose, layout);
    EXPECT_GT(recompute.tables().faces.size(), 3 * free.meshes[0].triangles.size() - 1);
    EXPECT_LE(fixed.tables().faces.size(), 1u) << "no faces listed (one element: a buffer cannot be empty)";
    const uint32_t n = recompute.vertex_count();
    app::WorldVertices out{device.create_diff_buffer<float3>(n), device.create_diff_buffer<float3>(n),
                           device.create_diff_buffer<float3>(n)};
    auto normals = [&](const app::GeometryStage& stage, const app::Scene& values_of) {
        const std::vector<float> v = app::gather_values(values_of, layout);
        auto p = device.create_buffer<float>(v.size());
        stream << p.copy_from(v.data());
        stage.forward(stream, p, out);
        return flat(read(out.normals.value));
    };
    const std::vector<float> before = normals(recompute, free), recomputed = normals(recompute, pose),
                             read_back = normals(fixed, pose);
    ASSERT_EQ(read_back.size(), recomputed.size());
    double largest_change = 0.0;
    for (size_t i = 0; i < recomputed.size(); ++i) {
        EXPECT_NEAR(read_back[i], recomputed[i], 2e-6f) << "normal float " << i;
        largest_change = std::max(largest_change, double(std::fabs(recomputed[i] - before[i])));
    }
    EXPECT_GT(largest_change, 0.1) << "the moved positions turn the normals (the check is not passing on the file's)";
}

TEST_F(StageRig, ShadeStageMatchesCentralDifferences) {
    const app::GBuffer gb = rasterize();   // visibility held fixed: the stage's input
    // Every material and light float is checked below, as if free (the rig's scene frees only vertices, which
    // makes the renderer read them as constants: ShadingPlan::value_gradients).
    app::ShadingPlan plan = data.shading;
    plan.value_gradients = true;
    EXPECT_FALSE(plan.vertex_color_gradients);   // the scene's vertex colours are not free
    plan.vertex_color_gradients = true;          // checked below as if they were
    app::ShadeStage shade(device, plan, true);
    Buffer<float4> out = image();
    const auto w = weights(4 * size_t(pixels), 4);
    auto f = [&] {
        shade.forward(stream, buffers, 0, gb, params.value, out);
        return dot(flat(read(out)), w);
    };
    auto wb = device.create_buffer<float>(w.size());
    stream << wb.copy_from(w.data()) << params.grad.fill_zero() << world.positions.zero_grad()
           << world.normals.zero_grad() << world.colors.zero_grad() << data.textures.zero_grad();
    shade.backward(stream, buffers, 0, gb, params, wb);
    const std::vector<float> gp = read(params.grad);
    const std::vector<float> gx = read(world.positions.grad);
    const std::vector<float> gcol = read(world.colors.grad);

    // Parameters: the lights, the ball's material and the camera (free: camera_free).
    auto set_params = [&](const std::vector<float>& x) { stream << params.value.copy_from(x.data()) << synchronize(); };
    std::vector<size_t> check;
    for (size_t l = 0; l < scene.lights.size(); ++l) {
        for (uint32_t k = 0; k < 3; ++k) check.push_back(data.layout.at(app::ParameterKind::light_color, uint32_t(l)) + k);
        check.push_back(data.layout.at(app::ParameterKind::light_intensity, uint32_t(l)));
    }
    for (uint32_t k = 0; k < 3; ++k) check.push_back(data.layout.at(app::ParameterKind::light_position, 0) + k);
    for (uint32_t k = 0; k < 3; ++k) check.push_back(data.layout.at(app::ParameterKind::material_value, 1) + k);   // albedo
    check.push_back(data.layout.at(app::ParameterKind::material_value, 0) + 6);   // shininess
    for (uint32_t k = 0; k < 3; ++k) check.push_back(data.layout.at(app::ParameterKind::camera_eye, 0) + k);
    check.push_back(data.layout.at(app::ParameterKind::camera_fov_y, 0));
    for (size_t i : check) {
        const double fd = central(values, i, 1e-3 * std::max(1.0f, std::fabs(values[i])), f, set_params);
        EXPECT_NEAR(gp[i], fd, 1e-2 * std::max(std::fabs(fd), 1.0)) << "parameter float " << i;
    }
    // World positions: the 12 largest gradients (the surface a pixel sees moves with its triangle's vertices).
    std::vector<float> positions = flat(read(world.positions.value));
    auto set_positions = [&](const std::vector<float>& x) { upload3(world.positions.value, x); };
    // A pixel whose lighting crosses a kink (n . l = 0, the two-sided normal's flip) inside a step spoils one
    // difference, so the closer of two steps must agree.
    for (size_t i : largest(gx, 12)) {
        const double fd1 = central(positions, i, 1e-3, f, set_positions);
        const double fd2 = central(positions, i, 3e-4, f, set_positions);
        const double fd = std::fabs(fd1 - gx[i]) <= std::fabs(fd2 - gx[i]) ? fd1 : fd2;
        EXPECT_NEAR(gx[i], fd, 1e-2 * std::max(std::fabs(fd), 1.0)) << "world position float " << i;
        EXPECT_GT(std::fabs(fd), 1e-3) << "world position float " << i;
    }
    // Vertex colours: the 6 largest (the image is linear in them).
    std::vector<float> vcolors = flat(read(world.colors.value));
    auto set_colors = [&](const std::vector<float>& x) { upload3(world.colors.value, x); };
    for (size_t i : largest(gcol, 6)) {
        const double fd = central(vcolors, i, 1e-2, f, set_colors);
        EXPECT_NEAR(gcol[i], fd, 1e-2 * std::max(std::fabs(fd), 1.0)) << "vertex colour float " << i;
        EXPECT_GT(std::fabs(fd), 1e-3) << "vertex colour float " << i;
    }

    // With the colours not free (the scene's own plan), their reads are detached: no gradient reaches them, and
    // the positions' gradient is the same.
    app::ShadeStage fixed_colors(device, [&] {
        app::ShadingPlan p = plan;
        p.vertex_color_gradients = false;
        return p;
    }(), true);
    stream << params.grad.fill_zero() << world.positions.zero_grad() << world.normals.zero_grad()
           << world.colors.zero_grad() << data.textures.zero_grad();
    fixed_colors.backward(stream, buffers, 0, gb, params, wb);
    const std::vector<float> gx_fixed = read(world.positions.grad), gcol_fixed = read(world.colors.grad);
    EXPECT_EQ(std::count(gcol_fixed.begin(), gcol_fixed.end(), 0.0f), ptrdiff_t(gcol_fixed.size()));
    for (size_t i = 0; i < gx.size(); ++i)
        EXPECT_NEAR(gx_fixed[i], gx[i], 1e-5 * std::max(std::fabs(gx[i]), 1.0f)) << "world position float " << i;
}

// Without an environment drawn, the shading stage copies an image of the background colour under the shaded pixels
// (ShadeStage::plain_): every pixel no triangle covers is that colour with alpha 0, every covered one has alpha 1,
// and a new colour makes a new image.
TEST_F(StageRig, ShadeStageWritesThePlainBackgroundWhereNoTriangleCovers) {
    ASSERT_EQ(data.shading.background, nullptr);
    const app::GBuffer gb = rasterize();
    const std::vector<uint32_t> tri = read(gb.triangle);
    app::ShadeStage shade(device, data.shading, false);
    Buffer<float4> out = image();
    for (const float3 c : {float3(0.1f, 0.12f, 0.15f), float3(0.7f, 0.2f, 0.9f)}) {
        data.background = c;
        shade.forward(stream, buffers, 0, gb, params.value, out);
        const std::vector<float4> rgba = read(out);
        size_t uncovered = 0;
        for (size_t i = 0; i < rgba.size(); ++i) {
            if (tri[i] != app::gpu::kNone) {
                EXPECT_EQ(rgba[i].w, 1.0f) << "pixel " << i;
                continue;
            }
            ++uncovered;
            EXPECT_EQ(rgba[i].x, c.x) << "pixel " << i;
            EXPECT_EQ(rgba[i].y, c.y) << "pixel " << i;
            EXPECT_EQ(rgba[i].z, c.z) << "pixel " << i;
            EXPECT_EQ(rgba[i].w, 0.0f) << "pixel " << i;
        }
        EXPECT_GT(uncovered, rgba.size() / 4);
        EXPECT_LT(uncovered, rgba.size());
    }
}

// A texture that no material of a model has is not sampled at all, nor are vertex colours that no mesh has (the
// kernels carry no code for them), which must change nothing: the shading stage's image and gradients with the
// scene's plan equal those of a plan that samples every texture slot wherever a material has one and reads
// every vertex's colour.
TEST_F(TexturedStageRig, UnusedTexturesAndColoursAreLeftOutWithTheSameResults) {
    const app::ShadingPlan& plan = data.shading;
    EXPECT_FALSE(plan.vertex_colors);
    ASSERT_EQ(plan.materials.size(), 2u);
    for (const app::PlannedModel& m : plan.materials)
        EXPECT_EQ(m.textures, std::string(m.model->name) == "phong" ? 1u : 0u) << m.model->name;
    app::ShadingPlan every = plan;
    for (app::PlannedModel& m : every.materials) m.textures = ~0u;
    every.vertex_colors = true;
    const app::GBuffer gb = rasterize();
    const auto w = weights(4 * size_t(pixels), 5);
    auto wb = device.create_buffer<float>(w.size());
    stream << wb.copy_from(w.data());
    auto run = [&](const app::ShadingPlan& p) {
        app::ShadeStage shade(device, p, true);
        Buffer<float4> out = image();
        shade.forward(stream, buffers, 0, gb, params.value, out);
        stream << params.grad.fill_zero() << world.positions.zero_grad() << world.normals.zero_grad()
               << world.colors.zero_grad() << data.textures.zero_grad();
        shade.backward(stream, buffers, 0, gb, params, wb);
        std::vector<float> all = flat(read(out));
        for (const std::vector<float>& g : {read(params.grad), read(world.positions.grad)})
            all.insert(all.end(), g.begin(), g.end());
        return all;
    };
    const std::vector<float> left_out = run(plan), sampled = run(every);
    ASSERT_EQ(left_out.size(), sampled.size());
    float largest = 0.0f;
    for (float x : sampled) largest = std::max(largest, std::fabs(x));
    ASSERT_GT(largest, 0.0f);
    size_t textured = 0;   // floor pixels: the texture's colours reach the image
    // To rounding: a colour of 1 is not quite the interpolated b.x + b.y + b.z, and the gradients add by atomics.
    for (size_t i = 0; i < left_out.size(); ++i)
        EXPECT_NEAR(left_out[i], sampled[i], 1e-5f * std::max(std::fabs(sampled[i]), 1.0f)) << "value " << i;
    const std::vector<float> img(left_out.begin(), left_out.begin() + 4 * pixels);
    for (uint32_t i = 0; i < pixels; ++i)
        textured += std::fabs(img[4 * i] - img[4 * i + 2]) > 0.05f;   // the untextured floor was bluish grey
    EXPECT_GT(textured, 20u);
}

TEST_F(StageRig, AntialiasStageMatchesCentralDifferences) {
    auto [gb, colors] = shaded();
    app::AntialiasStage antialias(device, false, pixels);
    Buffer<float4> out = image();
    const auto w = weights(4 * size_t(pixels), 5);
    auto f = [&] {   // blends in place: each time from the shaded colours
        stream << colors.value.copy_to(out);
        antialias.forward(stream, buffers, 0, gb, params.value, out);
        return dot(flat(read(out)), w);
    };
    Buffer<float> dfinal = device.create_buffer<float>(w.size());
    f();   // backward() differentiates the pairs' edges its view's forward() found
    // colors.grad starts as dfinal (the identity part of out = colors + blends), so that it ends as the whole
    // colour gradient (the renderer starts it at 0 and its shading reads dfinal beside it).
    stream << dfinal.copy_from(w.data()) << colors.grad.copy_from(w.data()) << world.positions.zero_grad()
           << params.grad.fill_zero();
    antialias.backward(stream, buffers, 0, gb, params, colors.grad, dfinal);
    const std::vector<float> gx = read(world.positions.grad), gc = read(colors.grad);

    // World positions of silhouette vertices: the blends move with them. An edge walk that changes inside a
    // step spoils one difference, so the closer of two steps must agree (as geometry_gradient_test does).
    std::vector<float> positions = flat(read(world.positions.value));
    auto set_positions = [&](const std::vector<float>& x) { upload3(world.positions.value, x); };
    int nonzero = 0;
    for (size_t i : largest(gx, 12)) {
        const double fd1 = central(positions, i, 1e-4, f, set_positions);
        const double fd2 = central(positions, i, 3e-4, f, set_positions);
        const double fd = std::fabs(fd1 - gx[i]) <= std::fabs(fd2 - gx[i]) ? fd1 : fd2;
        EXPECT_NEAR(gx[i], fd, 0.03 * std::fabs(fd) + 1e-3) << "world position float " << i;
        nonzero += std::fabs(fd) > 1e-2;
    }
    EXPECT_GE(nonzero, 8);
    // Colours: out is linear in them; the 12 largest gradients differ from the identity's seed where a pair
    // blends.
    std::vector<float> c = flat(read(colors.value));
    auto set_colors = [&](const std::vector<float>& x) {
        std::vector<float4> v(pixels);
        for (uint32_t i = 0; i < pixels; ++i) v[i] = float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        stream << colors.value.copy_from(v.data()) << synchronize();
    };
    std::vector<float> blend(gc.size());
    for (size_t i = 0; i < gc.size(); ++i) blend[i] = gc[i] - w[i];
    for (size_t i : largest(blend, 12)) {
        const double fd = central(c, i, 1e-2, f, set_colors);
        EXPECT_NEAR(gc[i], fd, 1e-3 * std::max(std::fabs(fd), 1.0)) << "colour float " << i;
    }
}

// The walk list holds exactly the pairs of neighbouring pixels that see different triangles (or a triangle and the
// background): each thread of the pairs kernel lists a run of a row's pixels with one atomic, so the runs' seams,
// a row's last pixel (no right pair) and the last row (no lower pairs) are where a pair could be lost or invented.
TEST_F(OddSizeStageRig, AntialiasListsEveryPairThatSeesTwoTriangles) {
    ASSERT_EQ(width, 37u);
    auto [gb, colors] = shaded();
    app::AntialiasStage antialias(device, false, pixels);
    Buffer<float4> out = image();
    stream << colors.value.copy_to(out);
    antialias.forward(stream, buffers, 0, gb, params.value, out);
    const std::vector<uint32_t> listed = antialias.walked_pairs(stream);
    const std::vector<uint32_t> ids = read(gb.triangle);
    std::vector<uint32_t> expected;
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            const uint32_t at = y * width + x;
            if (x + 1 < width && ids[at + 1] != ids[at]) expected.push_back(2 * at);
            if (y + 1 < height && ids[at + width] != ids[at]) expected.push_back(2 * at + 1);
        }
    ASSERT_GT(expected.size(), 40u);   // the ball's silhouette and its inner edges
    size_t seams = 0;
    for (uint32_t e : expected) seams += e % 2 == 0 && (e / 2 % width) % 16 == 15;
    EXPECT_GT(seams, 0u);              // some pair spans two runs
    EXPECT_EQ(listed, expected);
    // Where no pair blends the image keeps its shaded colour.
    const auto shaded_colors = read(colors.value), blended = read(out);
    size_t same = 0;
    for (uint32_t i = 0; i < pixels; ++i)
        same += blended[i].x == shaded_colors[i].x && blended[i].y == shaded_colors[i].y &&
                blended[i].z == shaded_colors[i].z && blended[i].w == shaded_colors[i].w;
    EXPECT_GT(same, pixels / 2);
    EXPECT_LT(same, pixels);
}

// The pairs' edges come from forward(): a backward() with no forward() of its view would differentiate no pair
// (a silent zero gradient), so it refuses, naming the stage.
TEST_F(StageRig, AntialiasBackwardWithoutItsForwardRefuses) {
    auto [gb, colors] = shaded();
    app::AntialiasStage antialias(device, false, pixels);
    Buffer<float> dfinal = device.create_buffer<float>(4 * size_t(pixels));
    auto backward = [&] { antialias.backward(stream, buffers, 0, gb, params, colors.grad, dfinal); };
    try {
        backward();
        ADD_FAILURE() << "backward() before any forward() was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("AntialiasStage::backward: view 0"), std::string::npos) << e.what();
    }
    Buffer<float4> out = image();
    stream << colors.value.copy_to(out);
    antialias.forward(stream, buffers, 0, gb, params.value, out);
    EXPECT_NO_THROW(backward());
    stream << synchronize();
}

TEST_F(StageRig, EveryLossMatchesCentralDifferences) {
    // The objective's loss of an image against a target, for every loss plug-in: d loss / d image. A 37x3 image:
    // image_loss sums runs of 16 pixels of a row, and the rows' last runs are short.
    const uint32_t width = 37, height = 3, n = width * height, runs = app::image_loss_runs(width, height);
    ASSERT_EQ(runs, 9u);
    std::vector<float> x = weights(4 * n, 6), t = weights(4 * n, 7);
    auto to4 = [](const std::vector<float>& v) {
        std::vector<float4> out(v.size() / 4);
        for (size_t i = 0; i < out.size(); ++i) out[i] = float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
        return out;
    };
    Buffer<float4> img = device.create_buffer<float4>(n), target = device.create_buffer<float4>(n);
    Buffer<float> dimage = device.create_buffer<float>(4 * n);
    Buffer<float> loss = device.create_buffer<float>(n), sqerr = device.create_buffer<float>(n);
    const auto t4 = to4(t);
    stream << target.copy_from(t4.data()) << synchronize();
    for (const app::LossModel* model : app::loss_models()) {
        app::LossKernels k(device, *model, false, nullptr, false);
        auto f = [&] {
            stream << (*k.image_loss)(img, target, loss, sqerr, 0u, dimage.as<float4>(), 1.0f, width)
                          .dispatch(app::image_loss_runs_x(width), height);
            const auto l = read(loss);
            double s = 0;
            for (uint32_t r = 0; r < runs; ++r) s += l[r];
            return s;
        };
        auto set = [&](const std::vector<float>& v) {
            const auto v4 = to4(v);
            stream << img.copy_from(v4.data()) << synchronize();
        };
        set(x);
        f();
        const std::vector<float> g = read(dimage);
        int nonzero = 0;
        // The kernel sums a run's 16 losses in float (ulp about 1e-6 at these sums), which the difference's 2e-3
        // step turns into up to about 1e-3 in fd.
        for (size_t i = 0; i < x.size(); ++i) {
            const double fd = central(x, i, 1e-3, f, set);
            EXPECT_NEAR(g[i], fd, 3e-3 * std::max(std::fabs(fd), 1.0)) << model->name << " float " << i;
            nonzero += std::fabs(fd) > 1e-3;
        }
        EXPECT_GE(nonzero, int(n * 15 / 16)) << model->name;   // silhouette: the alphas
        // The squared errors of the clamped colours (for PSNR), summed per run as the host sums them.
        f();   // at x itself (the differences left the last one perturbed)
        const auto e = read(sqerr);
        const uint32_t runs_x = app::image_loss_runs_x(width);
        for (uint32_t r = 0; r < runs; ++r) {
            const uint32_t y = r / runs_x, x0 = (r % runs_x) * app::kRowRun;
            double host = 0;
            for (uint32_t xx = x0; xx < std::min(x0 + app::kRowRun, width); ++xx)
                for (int c = 0; c < 3; ++c) {
                    const size_t i = 4 * (size_t(y) * width + xx) + size_t(c);
                    const double d = std::clamp(x[i], 0.0f, 1.0f) - std::clamp(t[i], 0.0f, 1.0f);
                    host += d * d;
                }
            EXPECT_NEAR(e[r], host, 1e-5 * std::max(host, 1.0)) << model->name << " run " << r;
        }
    }
}

} // namespace adjoint::test
