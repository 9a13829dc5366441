// The geometry demos, reduced: the pose is recovered from random starts with antialiased visibility and
// with soft rasterization, and stays stuck with hard visibility (so the silhouette gradients are what moves
// it); the shape is recovered (held-out silhouette IoU, Chamfer distance), and tangles without its
// regularizer; the camera is recovered from one picture. ADJOINT_FULL_DEMOS=1 runs the demos at their own
// size and length instead (the figures in the README come from that), printing the measures.
#include "support/device_fixture.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace adjoint::test {

namespace {

bool full() {
    const char* v = std::getenv("ADJOINT_FULL_DEMOS");
    return v && std::string(v) == "1";
}

app::Scene demo(const std::string& name, uint32_t size, uint32_t iterations) {
    app::LoadOptions lo;
    if (!full()) lo.resolution = app::Resolution{size, size};
    auto s = app::load_scene(std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes" / name, lo);
    if (!full()) s.optimize->iterations = iterations;
    return s;
}

void run(app::Optimizer& opt) {
    while (opt.iteration() < opt.total_iterations()) opt.step();
}

// The diagonal of a mesh's bounding box (object space, times its scale).
double diagonal(const app::Mesh& m) {
    float3 lo = m.obj_positions[0], hi = lo;
    for (const auto& p : m.obj_positions)
        for (int c = 0; c < 3; ++c) {
            lo[c] = std::min(lo[c], p[c]);
            hi[c] = std::max(hi[c], p[c]);
        }
    double d2 = 0;
    for (int c = 0; c < 3; ++c) d2 += std::pow(double(hi[c] - lo[c]) * m.transform.scale[c], 2);
    return std::sqrt(d2);
}

struct PoseError {
    double degrees, translation;   // translation: fraction of the bounding-box diagonal
};

PoseError pose_error(app::Optimizer& opt, const app::Scene& truth) {
    PoseError e{};
    for (const auto& p : opt.parameters()) {
        if (p.kind == app::ParameterKind::mesh_rotation) e.degrees = *p.error * 180.0 / M_PI;
        if (p.kind == app::ParameterKind::mesh_translation) {
            double d2 = 0;
            for (int c = 0; c < 3; ++c) d2 += std::pow(double(p.value[c] - (*p.true_value)[c]), 2);
            e.translation = std::sqrt(d2) / diagonal(truth.meshes[0]);
        }
    }
    return e;
}

// Points on a mesh's surface: its vertices and 4 points inside each triangle (the centroid and three points
// towards the corners), so that the Chamfer distance measures surfaces, not where the vertices slid.
std::vector<float3> surface_points(const app::Mesh& m) {
    std::vector<float3> out = m.positions;
    const float w[4][3] = {{1 / 3.f, 1 / 3.f, 1 / 3.f}, {0.6f, 0.2f, 0.2f}, {0.2f, 0.6f, 0.2f}, {0.2f, 0.2f, 0.6f}};
    for (const auto& t : m.triangles) {
        const float3 a = m.positions[t.x], b = m.positions[t.y], c = m.positions[t.z];
        for (const auto& k : w)
            out.push_back(float3(a.x * k[0] + b.x * k[1] + c.x * k[2], a.y * k[0] + b.y * k[1] + c.y * k[2],
                                 a.z * k[0] + b.z * k[1] + c.z * k[2]));
    }
    return out;
}

// Symmetric Chamfer distance between two point sets (mean nearest distance each way, averaged).
double chamfer(const std::vector<float3>& a, const std::vector<float3>& b) {
    auto one_way = [](const std::vector<float3>& from, const std::vector<float3>& to) {
        double sum = 0;
        for (const auto& p : from) {
            double best = 1e300;
            for (const auto& q : to)
                best = std::min(best, std::pow(double(p.x - q.x), 2) + std::pow(double(p.y - q.y), 2) +
                                          std::pow(double(p.z - q.z), 2));
            sum += std::sqrt(best);
        }
        return sum / double(from.size());
    };
    return 0.5 * (one_way(a, b) + one_way(b, a));
}

// Silhouette IoU (alpha > 1/2 of the antialiased render) over views the optimization never saw: azimuths
// between the training orbit's, elevations above and below it.
double heldout_iou(Device& device, app::Scene truth, app::Scene current) {
    std::vector<app::Camera> views;
    const app::Camera base = truth.camera;
    const float3 offset(base.eye.x - base.target.x, base.eye.y - base.target.y, base.eye.z - base.target.z);
    const double dist = std::sqrt(double(offset.x) * offset.x + double(offset.y) * offset.y + double(offset.z) * offset.z);
    for (int k = 0; k < 8; ++k) {
        const double az = (11.25 + 45.0 * k) * M_PI / 180, el = (k % 2 ? -40.0 : 65.0) * M_PI / 180;
        app::Camera c = base;
        c.eye = float3(base.target.x + float(dist * std::cos(el) * std::sin(az)), base.target.y + float(dist * std::sin(el)),
                       base.target.z + float(dist * std::cos(el) * std::cos(az)));
        views.push_back(c);
    }
    truth.views = views;
    current.views = views;
    truth.optimize.reset();
    current.optimize.reset();
    app::SceneRenderer rt(device, truth), rc(device, current);
    size_t inter = 0, uni = 0;
    for (uint32_t v = 0; v < views.size(); ++v) {
        auto a = rt.render(v), b = rc.render(v);
        for (size_t i = 0; i < a.texels.size(); ++i) {
            bool in_a = a.texels[i].w > 0.5f, in_b = b.texels[i].w > 0.5f;
            inter += in_a && in_b;
            uni += in_a || in_b;
        }
    }
    return uni ? double(inter) / double(uni) : 1.0;
}

// Faces whose normal points towards the blob's centre: a tangled (folded) surface.
size_t inverted_faces(const app::Mesh& m) {
    size_t n = 0;
    for (const auto& t : m.triangles) {
        const float3 a = m.positions[t.x], b = m.positions[t.y], c = m.positions[t.z];
        const float3 e1(b.x - a.x, b.y - a.y, b.z - a.z), e2(c.x - a.x, c.y - a.y, c.z - a.z);
        const float3 nrm(e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x);
        const float3 centre((a.x + b.x + c.x) / 3, (a.y + b.y + c.y) / 3, (a.z + b.z + c.z) / 3);
        n += nrm.x * centre.x + nrm.y * centre.y + nrm.z * centre.z < 0;
    }
    return n;
}

} // namespace

class GeometryDemos : public DeviceTest {};

TEST_F(GeometryDemos, ShapeFromSixteenViews) {
    auto scene = demo("shape.json", 128, 200);
    app::Optimizer opt(device, scene);
    run(opt);
    app::Scene current = opt.current_scene();
    const auto& truth_mesh = scene.meshes[0];
    const double diag = diagonal(truth_mesh);
    const double cd = chamfer(surface_points(current.meshes[0]), surface_points(truth_mesh)) / diag;
    const double iou = heldout_iou(device, scene, current);
    std::printf("shape: held-out silhouette IoU %.4f, Chamfer %.4f%% of the diagonal, %zu inverted faces\n", iou,
                100 * cd, inverted_faces(current.meshes[0]));
    EXPECT_GE(iou, 0.95);
    EXPECT_LE(cd, 0.01);
    EXPECT_EQ(inverted_faces(current.meshes[0]), 0u);
}

// Without the Laplacian the same optimization tangles the surface: the regularizer is doing the work.
TEST_F(GeometryDemos, ShapeTanglesWithoutTheRegularizer) {
    auto scene = demo("shape.json", 128, 200);
    scene.optimize->laplacian = 0;
    app::Optimizer opt(device, scene);
    run(opt);
    const size_t inverted = inverted_faces(opt.current_scene().meshes[0]);
    std::printf("shape without the regularizer: %zu inverted faces\n", inverted);
    EXPECT_GT(inverted, 10u);
}

TEST_F(GeometryDemos, PoseFromRandomStartsWithAntialiasing) {
    for (uint64_t seed : {1u, 2u}) {
        auto scene = demo("pose.json", 64, 250);
        scene.optimize->seed = seed;
        app::Optimizer opt(device, scene);
        auto start = pose_error(opt, scene);
        run(opt);
        auto end = pose_error(opt, scene);
        EXPECT_GT(start.degrees, 20.0) << "seed " << seed;   // the start really is 30 degrees off
        EXPECT_LT(end.degrees, 1.0) << "seed " << seed;
        EXPECT_LT(end.translation, 0.005) << "seed " << seed;
    }
}

// The same with soft rasterization (the scene's sigma 1e-4, a reach of one pixel at 64x64, and gamma 0.1), from
// one start, with the learning rate decayed by 0.99 an iteration instead of the scene's 0.997. Near the pose, the
// soft silhouette's gradient changes as edges cross pixel centres, and Adam's steps (about the learning rate
// whatever the gradient's size) wander: at 0.997 the rotation ended 0.2-0.55 degrees off at iteration 250 in eight
// runs, 0.11 and 0.18 at 300 in two (where it swung between 0.03 and 1.9 on the way), and 1.01 and 1.30 in two
// more (the float atomics' order differs from run to run, and the path with it); antialias settles within 0.01
// degrees at 0.997. At 0.99 eleven runs ended 0.005-0.045 degrees off at 250 and 300.
static void anneal(app::Scene& scene) { scene.optimize->lr_decay = 0.99f; }

TEST_F(GeometryDemos, PoseFromARandomStartWithSoftRasterization) {
    auto scene = demo("pose.json", 64, 250);
    scene.optimize->seed = 3;
    anneal(scene);
    scene.render.visibility = app::Visibility::soft;
    app::Optimizer opt(device, scene);
    auto start = pose_error(opt, scene);
    run(opt);
    auto end = pose_error(opt, scene);
    EXPECT_GT(start.degrees, 20.0);
    EXPECT_LT(end.degrees, 0.5);
    EXPECT_LT(end.translation, 0.005);
}

// Defaults that work: soft visibility with no `soft` keys (the format's sigma 1e-4 and gamma 0.1) and the
// colour loss recovers the pose.
TEST_F(GeometryDemos, PoseWithSoftVisibilityAndTheFormatsDefaults) {
    const std::filesystem::path dir = std::filesystem::path(ADJOINT_SOURCE_DIR) / "assets" / "scenes";
    std::ifstream in(dir / "pose.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string render = R"("render": { "visibility": "antialias", "soft": { "sigma": 1e-4, "gamma": 0.1 } })";
    ASSERT_NE(text.find(render), std::string::npos);
    text.replace(text.find(render), render.size(), R"("render": { "visibility": "soft" })");
    app::LoadOptions lo;
    if (!full()) lo.resolution = app::Resolution{64, 64};
    auto scene = app::load_scene_from_string(text, dir, "pose-soft-defaults.json", lo);
    if (!full()) scene.optimize->iterations = 250;
    scene.optimize->seed = 3;
    anneal(scene);
    EXPECT_FLOAT_EQ(scene.render.soft_gamma, 0.1f);
    EXPECT_FLOAT_EQ(scene.render.soft_sigma, 1e-4f);
    app::Optimizer opt(device, scene);
    auto start = pose_error(opt, scene);
    run(opt);
    auto end = pose_error(opt, scene);
    std::printf("soft, the format's defaults: %.2f -> %.3f degrees, translation %.4f of the diagonal\n", start.degrees,
                end.degrees, end.translation);
    // Annealed as above (at the scene's 0.997, 250 iterations ended 0.15 and 1.7 degrees off in two runs). (This
    // start also converges with gamma 1e-4 at 64x64, 0.07° off; the old default fails other starts: 5 of 10 of
    // pose.json's at 128x128, README, and the bunny of issue 20.)
    EXPECT_GT(start.degrees, 20.0);
    EXPECT_LT(end.degrees, 0.5);
    EXPECT_LT(end.translation, 0.005);
}

TEST_F(GeometryDemos, PoseStaysStuckWithHardVisibility) {
    auto scene = demo("pose.json", 64, 250);
    scene.optimize->seed = 0;
    scene.render.visibility = app::Visibility::hard;
    app::Optimizer opt(device, scene);
    run(opt);
    auto end = pose_error(opt, scene);
    EXPECT_GT(end.degrees + 100 * end.translation, 5.0) << end.degrees << " degrees, " << end.translation;
}

// The camera from one picture. Sliding the target along the line of sight changes nothing in the image, so
// the measures are the eye, the viewing direction and the field of view.
TEST_F(GeometryDemos, CameraFromOnePicture) {
    // The scene's own 400 iterations: eye distance and field of view trade against each other (a dolly
    // zoom changes the picture only through perspective), so the eye moves along that valley slowly and
    // steadily (0.062 off at 250 iterations, 0.043 at 400, 0.029 at 600, 48-51 dB throughout).
    auto scene = demo("camera.json", 96, 400);
    app::Optimizer opt(device, scene);
    app::IterationReport last;
    while (opt.iteration() < opt.total_iterations()) last = opt.step();
    const app::Camera got = opt.current_scene().camera, want = scene.camera;
    auto dir = [](const app::Camera& c) {
        float3 d(c.target.x - c.eye.x, c.target.y - c.eye.y, c.target.z - c.eye.z);
        const float n = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
        return float3(d.x / n, d.y / n, d.z / n);
    };
    const float3 a = dir(got), b = dir(want);
    const double angle = std::acos(std::min(1.0, double(a.x * b.x + a.y * b.y + a.z * b.z))) * 180 / M_PI;
    const double eye = std::sqrt(std::pow(got.eye.x - want.eye.x, 2) + std::pow(got.eye.y - want.eye.y, 2) +
                                 std::pow(got.eye.z - want.eye.z, 2));
    std::printf("camera: eye off by %.4f, direction by %.3f degrees, fov by %.3f degrees, PSNR %.1f dB\n", eye, angle,
                std::fabs(got.fov_y - want.fov_y), last.image_psnr);
    EXPECT_LT(eye, 0.05);
    EXPECT_LT(angle, 0.3);
    EXPECT_LT(std::fabs(got.fov_y - want.fov_y), 1.0);
    EXPECT_GT(last.image_psnr, 35.0);
}

} // namespace adjoint::test
