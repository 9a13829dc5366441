// Cameras from intrinsics and matrices, NeRF and COLMAP datasets as views, and target images (compositing,
// box resampling): the projection checked on the host against each convention's own formula.
#include "scene_fixture.h"
#include "scene/loading.h"

#include <array>
#include <cstring>

namespace adjoint::app::test {

namespace {

// Where a world point lands, in pixels (x right, y down, pixel centres at +0.5), through the matrices.
float2 project(const Camera& camera, float3 p) {
    const float4x4 m = view_projection_matrix(camera);
    float c[4];
    for (size_t r = 0; r < 4; ++r) c[r] = m[0][r] * p.x + m[1][r] * p.y + m[2][r] * p.z + m[3][r];
    return {(c[0] / c[3] * 0.5f + 0.5f) * float(camera.width), (0.5f - c[1] / c[3] * 0.5f) * float(camera.height)};
}

constexpr double kPi = 3.14159265358979323846;

void expect_matrix_near(const float4x4& a, const float4x4& b, float tolerance) {
    for (size_t c = 0; c < 4; ++c)
        for (size_t r = 0; r < 4; ++r) EXPECT_NEAR(a[c][r], b[c][r], tolerance) << "column " << c << " row " << r;
}

Json matrix_json(const double (&m)[4][4]) {
    Json rows = Json::array();
    for (const auto& row : m) rows.push_back({row[0], row[1], row[2], row[3]});
    return rows;
}

// The little-endian bytes of a value, as COLMAP's binary files hold them.
template <typename T>
void put(std::string& out, T v) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    out.append(bytes, sizeof(T));
}

std::vector<std::string> files_of(const std::vector<ViewImage>& images) {
    std::vector<std::string> files;
    for (const ViewImage& image : images) files.push_back(image.file);
    return files;
}

} // namespace

class Cameras : public SceneFiles {};

TEST(CameraProjection, CentredIntrinsicsEqualTheFieldOfView) {
    Camera a;
    a.eye = {1, 2, 3};
    a.width = 64;
    a.height = 48;
    a.fov_y = 40;
    Camera b = a;
    const float f = 0.5f * 48 / float(std::tan(20 * kPi / 180));
    b.intrinsics = Intrinsics{f, f, 32, 24};
    expect_matrix_near(projection_matrix(a), projection_matrix(b), 1e-5f);
    EXPECT_NEAR(fov_y_of(f, 48), 40.0f, 1e-4f);
}

TEST(CameraProjection, AnOffCentrePrincipalPointShiftsThePicture) {
    Camera camera;
    camera.eye = {0, 0, 5};
    camera.width = 40;
    camera.height = 30;
    camera.intrinsics = Intrinsics{50, 60, 23.5f, 11.25f};
    // On the optical axis: the principal point itself.
    const float2 axis = project(camera, {0, 0, -1});
    EXPECT_NEAR(axis.x, 23.5f, 1e-4f);
    EXPECT_NEAR(axis.y, 11.25f, 1e-4f);
    // One unit right and up at distance 5: fx / 5 pixels right, fy / 5 up (rows grow down).
    const float2 p = project(camera, {1, 1, 0});
    EXPECT_NEAR(p.x, 23.5f + 50.0f / 5, 1e-4f);
    EXPECT_NEAR(p.y, 11.25f - 60.0f / 5, 1e-4f);
    // Scaling the resolution scales the intrinsics: the point keeps its place relative to the picture.
    set_resolution(camera, {80, 60});
    const float2 q = project(camera, {1, 1, 0});
    EXPECT_NEAR(q.x, 2 * p.x, 1e-3f);
    EXPECT_NEAR(q.y, 2 * p.y, 1e-3f);
}

TEST_F(Cameras, AMatrixCameraEqualsItsLookAt) {
    Json scene = minimal_scene();
    scene["camera"] = Json::parse(R"({"eye": [1, 2, 4], "target": [0.5, 0, 0], "up": [0, 1, 0], "resolution": [8, 8]})");
    const Camera look = load(scene).camera;
    // The same pose as a camera-to-world matrix: columns side, up, back (−forward), eye.
    const float4x4 v = view_matrix(look);   // world → camera: rows side, up, back
    double m[4][4] = {};
    for (size_t r = 0; r < 3; ++r) {
        for (size_t c = 0; c < 3; ++c) m[r][c] = v[r][c];   // the transpose of the rotation
    }
    m[0][3] = 1;
    m[1][3] = 2;
    m[2][3] = 4;
    m[3][3] = 1;
    scene["camera"] = {{"matrix", matrix_json(m)}, {"resolution", {8, 8}}};
    const Camera matrix = load(scene).camera;
    expect_matrix_near(view_matrix(matrix), view_matrix(look), 1e-5f);
    expect_matrix_near(view_projection_matrix(matrix), view_projection_matrix(look), 1e-5f);
}

TEST_F(Cameras, BadMatricesAndMixedKeysAreNamed) {
    Json scene = minimal_scene();
    const double skew[4][4] = {{1, 0.5, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 3}, {0, 0, 0, 1}};
    scene["camera"] = {{"matrix", matrix_json(skew)}, {"resolution", {8, 8}}};
    EXPECT_EQ(error_of(scene), "scene.json: camera.matrix: its upper 3x3 is not a rotation (orthonormal columns, "
                               "determinant 1)");
    const double row[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 3}, {0, 0, 1, 1}};
    scene["camera"]["matrix"] = matrix_json(row);
    EXPECT_EQ(error_of(scene), "scene.json: camera.matrix: expected a last row of [0, 0, 0, 1]");
    scene["camera"]["matrix"] = {{1, 0, 0}, {0, 1, 0}};
    EXPECT_EQ(error_of(scene), "scene.json: camera.matrix: expected a 4x4 camera-to-world matrix: a list of 4 rows "
                               "of 4 numbers");
    const double fine[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 3}, {0, 0, 0, 1}};
    scene["camera"]["matrix"] = matrix_json(fine);
    scene["camera"]["eye"] = {0, 0, 3};
    EXPECT_EQ(error_of(scene), "scene.json: camera.eye: give either matrix or eye/target/up, not both");
    scene = minimal_scene();
    scene["camera"]["fov_y"] = 30;
    scene["camera"]["intrinsics"] = {{"fx", 8}, {"fy", 8}, {"cx", 4}, {"cy", 4}};
    EXPECT_EQ(error_of(scene), "scene.json: camera.fov_y: give either fov_y or intrinsics, not both");
    scene["camera"].erase("fov_y");
    scene["camera"]["intrinsics"]["fy"] = 0;
    EXPECT_EQ(error_of(scene), "scene.json: camera.intrinsics.fy: expected a focal length in pixels > 0");
    // Narrower than 0.001 degrees across a side: the projection overflowed (a black picture).
    scene["camera"]["intrinsics"]["fy"] = 8;
    scene["camera"]["intrinsics"]["fx"] = 1e30;
    EXPECT_EQ(error_of(scene), "scene.json: camera.intrinsics.fx: fx is 1e+30 pixels, above 458366.22: a field of "
                               "view narrower than 0.001 degrees across 8 pixels");
    // The limit: 0.001 degrees across 8 pixels is a focal length of 4 / tan(0.0005 degrees) = 458366.2 pixels.
    scene["camera"]["intrinsics"]["fx"] = 458366;
    EXPECT_NO_THROW(load(scene));
    scene["camera"]["intrinsics"]["fx"] = 458367;
    EXPECT_EQ(error_of(scene), "scene.json: camera.intrinsics.fx: fx is 458367 pixels, above 458366.22: a field of "
                               "view narrower than 0.001 degrees across 8 pixels");
    // Set later, as a parameter's value (params.json, scene.parameters): the same test.
    scene["camera"]["intrinsics"]["fx"] = 8;
    scene["optimize"] = {{"parameters", {{"camera.intrinsics", {{"init", {8, 8, 4, 4}}}}}}};
    const Scene loaded = load(scene);
    const Parameter& p = loaded.optimize->parameters.at(0);
    // The optimizer keeps a free one in the same ranges (fx and fy reached 0, a principal point left of the
    // image was clamped to 0).
    const float wide[4] = {8, 8, 4, 4}, narrow[4] = {8, 1e30f, 4, 4}, flat[4] = {0, 8, 4, 4}, crop[4] = {8, 8, -9, -3};
    EXPECT_EQ(parameter_value_problem(loaded, p, wide), "");
    EXPECT_EQ(parameter_value_problem(loaded, p, crop), "");
    EXPECT_EQ(parameter_value_problem(loaded, p, narrow), "expected fy in [0.001, 458366.22]");
    EXPECT_EQ(parameter_value_problem(loaded, p, flat), "expected fx in [0.001, 458366.22]");
    ASSERT_EQ(p.value_ranges().size(), 3u);
    EXPECT_EQ(p.value_ranges()[2].lo, -INFINITY);
    EXPECT_EQ(focal_problem(8, 458366, 8, 8), "");
    EXPECT_EQ(focal_problem(8, 458367, 8, 8), "fy is 458367 pixels, above 458366.22: a field of view narrower than "
                                              "0.001 degrees across 8 pixels");
}

TEST_F(Cameras, IntrinsicsRefuseFovYAsAParameterButKeepEyeAndTarget) {
    Json scene = minimal_scene();
    scene["camera"]["intrinsics"] = {{"fx", 9}, {"fy", 8}, {"cx", 3.5}, {"cy", 4.5}};
    scene["optimize"] = {{"parameters", {{"camera.fov_y", {{"init", 30}}}}}};
    EXPECT_EQ(error_of(scene), "scene.json: optimize.parameters[\"camera.fov_y\"]: the camera gives intrinsics "
                               "(fx, fy, cx, cy), not fov_y");
    scene["optimize"] = {{"parameters", {{"camera.eye", {{"init", {0, 1, 5}}}}}}};
    const Scene loaded = load(scene);
    ASSERT_TRUE(loaded.views[0].intrinsics);
    EXPECT_EQ(*loaded.views[0].intrinsics, (Intrinsics{9, 8, 3.5f, 4.5f}));
    EXPECT_NEAR(loaded.views[0].fov_y, fov_y_of(8, 8), 1e-5f);
}

TEST_F(Cameras, TheResolutionOptionScalesIntrinsics) {
    Json scene = minimal_scene();
    scene["camera"]["intrinsics"] = {{"fx", 9}, {"fy", 8}, {"cx", 3.5}, {"cy", 4.5}};
    scene["views"] = Json::array({{{"eye", {0, 1, 5}}}, {{"eye", {1, 0, 5}}, {"fov_y", 30}}});
    LoadOptions options;
    options.resolution = Resolution{16, 32};
    const Scene s = load_scene_from_string(scene.dump(), dir(), "scene.json", options);
    ASSERT_TRUE(s.views[0].intrinsics);
    EXPECT_EQ(*s.views[0].intrinsics, (Intrinsics{18, 32, 7, 18}));   // inherited from the camera, scaled
    EXPECT_FALSE(s.views[1].intrinsics);                              // its own fov_y replaces them
    EXPECT_EQ(s.views[1].fov_y, 30);
}

TEST_F(Cameras, NerfTransformsGiveTheViewsAndTheirImages) {
    Json scene = minimal_scene();
    scene["camera"] = Json::parse(R"({"resolution": [8, 6]})");
    const double angle = 0.8;
    // Frame 0 at (0, 0, 4) looking down −Z; frame 1 turned 90° about +Y at (4, 0, 0), looking down −X.
    const double m0[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 4}, {0, 0, 0, 1}};
    const double m1[4][4] = {{0, 0, 1, 4}, {0, 1, 0, 0}, {-1, 0, 0, 0}, {0, 0, 0, 1}};
    Json transforms = {{"camera_angle_x", angle}, {"aabb_scale", 4},   // a key Adjoint does not use is ignored
                       {"frames", {{{"file_path", "./train/r_0"}, {"transform_matrix", matrix_json(m0)}},
                                   {{"file_path", "train/r_1.png"}, {"transform_matrix", matrix_json(m1)}}}}};
    write("data/transforms.json", transforms.dump());
    scene["views"] = {{"nerf", "data/transforms.json"}};
    const Scene s = load(scene);
    ASSERT_EQ(s.views.size(), 2u);
    EXPECT_EQ(files_of(s.view_images), (std::vector<std::string>{"data/train/r_0.png", "data/train/r_1.png"}));
    const float f = float(4 / std::tan(angle / 2));
    ASSERT_TRUE(s.views[0].intrinsics);
    EXPECT_NEAR(s.views[0].intrinsics->fx, f, 1e-4f);
    EXPECT_NEAR(s.views[0].intrinsics->fy, f, 1e-4f);
    EXPECT_EQ(s.views[0].intrinsics->cx, 4);
    EXPECT_EQ(s.views[0].intrinsics->cy, 3);
    // A point 0.5 right and 0.25 up of the axis, 4 ahead of each camera.
    const float2 p0 = project(s.views[0], {0.5f, 0.25f, 0});
    EXPECT_NEAR(p0.x, 4 + f * 0.5f / 4, 1e-3f);
    EXPECT_NEAR(p0.y, 3 - f * 0.25f / 4, 1e-3f);
    const float2 p1 = project(s.views[1], {0, 0.25f, -0.5f});   // frame 1's right is world −Z
    EXPECT_NEAR(p1.x, 4 + f * 0.5f / 4, 1e-3f);
    EXPECT_NEAR(p1.y, 3 - f * 0.25f / 4, 1e-3f);
    // The main camera without a pose of its own is the first view.
    EXPECT_NEAR(s.camera.eye.z, 4, 1e-6f);

    // fl_x / fl_y / cx / cy at w × h scale to the views' resolution.
    transforms = {{"fl_x", 20}, {"fl_y", 22}, {"cx", 9}, {"cy", 5}, {"w", 16}, {"h", 12},
                  {"frames", {{{"file_path", "a.png"}, {"transform_matrix", matrix_json(m0)}}}}};
    write("data/transforms.json", transforms.dump());
    const Scene scaled = load(scene);
    EXPECT_EQ(*scaled.views[0].intrinsics, (Intrinsics{10, 11, 4.5f, 2.5f}));
    // The pinhole models by COLMAP's names; a size in whole pixels (16.9 scaled fl_x by 8 / 16.9 while the
    // images were checked at 16).
    for (const char* model : {"PINHOLE", "OPENCV"}) {
        transforms["camera_model"] = model;
        write("data/transforms.json", transforms.dump());
        EXPECT_EQ(*load(scene).views[0].intrinsics, (Intrinsics{10, 11, 4.5f, 2.5f})) << model;
    }
    // SIMPLE_PINHOLE has one focal length: an fl_y of another value is refused (it was taken as a second), an
    // equal one taken.
    transforms["camera_model"] = "SIMPLE_PINHOLE";
    write("data/transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: data/transforms.json: fl_y: camera_model SIMPLE_PINHOLE has "
                               "one focal length, but fl_x is 20 and fl_y 22: give PINHOLE for two");
    transforms["fl_y"] = 20;
    write("data/transforms.json", transforms.dump());
    EXPECT_EQ(*load(scene).views[0].intrinsics, (Intrinsics{10, 10, 4.5f, 2.5f}));
    transforms["fl_y"] = 22;
    transforms["camera_model"] = "OPENCV_FISHEYE";
    write("data/transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: data/transforms.json: camera_model: \"OPENCV_FISHEYE\" is not "
                               "one of \"PINHOLE\", \"SIMPLE_PINHOLE\", \"OPENCV\" (pinhole cameras only, named as "
                               "COLMAP names them)");
    transforms.erase("camera_model");
    transforms["w"] = 16.9;
    write("data/transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: data/transforms.json: w: expected a whole number of pixels");
}

TEST_F(Cameras, NerfProblemsNameTheFileAndFrame) {
    Json scene = minimal_scene();
    scene["views"] = {{"nerf", "transforms.json"}};
    const double m0[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 4}, {0, 0, 0, 1}};
    Json transforms = {{"camera_angle_x", 0.8},
                       {"frames", {{{"file_path", "a"}, {"transform_matrix", matrix_json(m0)}},
                                   {{"file_path", "b"}, {"transform_matrix", {{1, 0}}}}}}};
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: frames[1].transform_matrix: expected a 4x4 "
                               "camera-to-world matrix: a list of 4 rows of 4 numbers");
    const double singular[4][4] = {{1, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 1, 4}, {0, 0, 0, 1}};
    transforms["frames"][1]["transform_matrix"] = matrix_json(singular);
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: frames[1].transform_matrix: its rotation has "
                               "a zero column");
    transforms["frames"][1]["transform_matrix"] = matrix_json(m0);
    transforms["k1"] = 0.1;
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: k1: lens distortion is not supported "
                               "(pinhole cameras only): undistort the images first");
    write("transforms.json", "{\"frames\": [\n  {\"file_path\": \"a\",}\n]}");
    EXPECT_EQ(error_of(scene).rfind("scene.json: views.nerf: transforms.json: line 2", 0), 0u) << error_of(scene);
    write("transforms.json", R"({"camera_angle_x": 0.8})");
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: frames: required key is missing");
    transforms.erase("k1");
    transforms.erase("camera_angle_x");
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: frames[0]: expected camera_angle_x, or fl_x "
                               "with w and h");
    scene["optimize"] = {{"target", "views"}, {"parameters", {{"materials.base.albedo", {{"init", {1, 1, 1}}}}}}};
    scene.erase("views");
    EXPECT_EQ(error_of(scene), "scene.json: optimize.target: the views come from no dataset ({\"nerf\": ...} or "
                               "{\"colmap\": ...}), so they have no images");
}

// A frame without its matrix, and focal lengths that are not positive.
TEST_F(Cameras, NerfFramesWithoutAMatrixOrWithANonPositiveFocalLengthAreNamed) {
    Json scene = minimal_scene();
    scene["views"] = {{"nerf", "transforms.json"}};
    const double m0[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 4}, {0, 0, 0, 1}};
    Json transforms = {{"camera_angle_x", 0.8}, {"frames", {{{"file_path", "a"}}}}};
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: frames[0].transform_matrix: required key is "
                               "missing");
    transforms = {{"fl_x", -20}, {"w", 8}, {"h", 8},
                  {"frames", {{{"file_path", "a"}, {"transform_matrix", matrix_json(m0)}}}}};
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: fl_x: fx is -20: expected a finite focal "
                               "length of at least 0.001 pixels");
    // Narrower than 0.001 degrees: the views rendered black.
    transforms["fl_x"] = 1e30;
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: fl_x: fx is 1e+30 pixels, above 458366.22: a "
                               "field of view narrower than 0.001 degrees across 8 pixels");
    // Scaled to the views' size, named with both sizes.
    transforms["w"] = 16;
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: fl_x: scaled from 16x8 to the views' 8x8, fx "
                               "is 5e+29 pixels, above 458366.22: a field of view narrower than 0.001 degrees across 8 "
                               "pixels");
    transforms["w"] = 8;
    transforms.erase("fl_x");
    transforms["camera_angle_x"] = 0;
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: camera_angle_x: expected an angle in (0, pi) "
                               "radians");
    transforms["camera_angle_x"] = 1e-30;
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: camera_angle_x: fx is 8e+30 pixels, above "
                               "458366.22: a field of view narrower than 0.001 degrees across 8 pixels");
}

// COLMAP: the world-to-camera pose x_cam = R·x + t, x right, y down, z ahead; pixel (fx·x/z + cx, fy·y/z + cy)
// with pixel centres at +0.5, as COLMAP's documentation gives it.
class Colmap : public SceneFiles {
protected:
    // Image "b.png": R = 90° about +Y (q = (cos 45°, 0, sin 45°, 0)), t = (0.1, -0.2, 3), PINHOLE camera 1 at
    // 16x12. Image "a.png": identity rotation, t = (0, 0, 5), SIMPLE_PINHOLE camera 2 at 8x6.
    static constexpr double s45 = 0.70710678118654752;

    void write_text(const std::string& folder) {
        write(folder + "/cameras.txt", "# Camera list\n# CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
                                       "1 PINHOLE 16 12 20 22 7.5 6.5\n2 SIMPLE_PINHOLE 8 6 9 4 3\n");
        write(folder + "/images.txt", "# Image list\n"
                                      "1 0.70710678118654752 0 0.70710678118654752 0 0.1 -0.2 3 1 b.png\n"
                                      "\n"
                                      "2 1 0 0 0 0 0 5 2 a.png\n"
                                      "1.0 2.0 -1 3.0 4.0 7\n");
    }
    void write_binary(const std::string& folder) {
        std::string cameras;
        put<uint64_t>(cameras, 2);
        put<int32_t>(cameras, 1);
        put<int32_t>(cameras, 1);   // PINHOLE
        put<uint64_t>(cameras, 16);
        put<uint64_t>(cameras, 12);
        for (double p : {20.0, 22.0, 7.5, 6.5}) put(cameras, p);
        put<int32_t>(cameras, 2);
        put<int32_t>(cameras, 0);   // SIMPLE_PINHOLE
        put<uint64_t>(cameras, 8);
        put<uint64_t>(cameras, 6);
        for (double p : {9.0, 4.0, 3.0}) put(cameras, p);
        write(folder + "/cameras.bin", cameras);
        std::string images;
        put<uint64_t>(images, 2);
        const auto image = [&](int32_t id, std::array<double, 7> pose, uint32_t camera, const char* name,
                               uint64_t points) {
            put(images, id);
            for (double v : pose) put(images, v);
            put(images, camera);
            images.append(name, std::strlen(name) + 1);
            put(images, points);
            for (uint64_t i = 0; i < points; ++i) {
                put(images, 1.0);
                put(images, 2.0);
                put<int64_t>(images, -1);
            }
        };
        image(1, {s45, 0, s45, 0, 0.1, -0.2, 3}, 1, "b.png", 2);
        image(2, {1, 0, 0, 0, 0, 0, 5}, 2, "a.png", 0);
        write(folder + "/images.bin", images);
    }

    // The views at 32x24: twice camera 1's resolution, four times camera 2's.
    Scene load_model(const std::string& folder) {
        Json scene = minimal_scene();
        scene["camera"] = Json::parse(R"({"resolution": [32, 24]})");
        scene["views"] = {{"colmap", folder}, {"images", "pictures"}};
        return load(scene);
    }

    void expect_colmap_projection(const Scene& s) {
        ASSERT_EQ(s.views.size(), 2u);
        EXPECT_EQ(files_of(s.view_images), (std::vector<std::string>{"pictures/a.png", "pictures/b.png"}));
        EXPECT_EQ(s.view_images[0].size, (Resolution{8, 6}));
        // a.png: camera at (0, 0, -5) looking down +Z (OpenCV), y down.
        const float3 pa{0.5f, 0.25f, 1};
        const double za = pa.z + 5;
        const float2 a = project(s.views[0], pa);
        EXPECT_NEAR(a.x, 4 * (9 * pa.x / za + 4), 1e-3);
        EXPECT_NEAR(a.y, 4 * (9 * pa.y / za + 3), 1e-3);
        // b.png: x_cam = R·x + t with R = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]].
        const float3 pb{-0.4f, 0.3f, 0.2f};
        const double xc = pb.z + 0.1, yc = pb.y - 0.2, zc = -pb.x + 3;
        const float2 b = project(s.views[1], pb);
        EXPECT_NEAR(b.x, 2 * (20 * xc / zc + 7.5), 1e-3);
        EXPECT_NEAR(b.y, 2 * (22 * yc / zc + 6.5), 1e-3);
    }
};

TEST_F(Colmap, ATextModelProjectsAsColmapSays) {
    write_text("sparse/0");
    expect_colmap_projection(load_model("sparse/0"));
}

TEST_F(Colmap, ABinaryModelProjectsAsColmapSays) {
    write_binary("sparse/1");
    expect_colmap_projection(load_model("sparse/1"));
}

// Distortion models whose coefficients are all 0 are their pinholes (COLMAP's were refused as "has lens
// distortion"; a transforms.json's OPENCV with zero k and p was taken): the same projection as the text model's.
TEST_F(Colmap, DistortionModelsWithoutDistortionAreTheirPinholes) {
    write_text("sparse/0");
    write("sparse/0/cameras.txt", "1 OPENCV 16 12 20 22 7.5 6.5 0 0 0 0\n2 SIMPLE_RADIAL 8 6 9 4 3 0\n");
    expect_colmap_projection(load_model("sparse/0"));
    write("sparse/0/cameras.txt", "1 FULL_OPENCV 16 12 20 22 7.5 6.5 0 0 0 0 0 0 0 0\n2 RADIAL 8 6 9 4 3 0 0\n");
    expect_colmap_projection(load_model("sparse/0"));
}

TEST_F(Colmap, ImagesOfAnotherSizeThanTheirCameraAreRefused) {
    write_text("sparse/0");
    write_solid_png("pictures/a.png", 8, 6, 0, 0, 255);
    write_solid_png("pictures/b.png", 16, 10, 0, 255, 0);
    Json scene = minimal_scene();
    scene["camera"] = Json::parse(R"({"resolution": [32, 24]})");
    scene["views"] = {{"colmap", "sparse/0"}, {"images", "pictures"}};
    scene["optimize"] = {{"target", "views"}, {"parameters", {{"materials.base.albedo", {{"init", {1, 1, 1}}}}}}};
    EXPECT_EQ(error_of(scene), "scene.json: optimize.target: sparse/0/images.txt line 2: pictures/b.png is 16x10, "
                               "but the dataset gives its "
                               "camera 16x12");
    write_solid_png("pictures/b.png", 16, 12, 0, 255, 0);
    const Scene s = load(scene);
    ASSERT_EQ(s.optimize->target_images.size(), 2u);
    EXPECT_EQ(s.optimize->target_images[0].width, 32u);   // resampled to the views
    EXPECT_EQ(s.optimize->target_images[0].texels[0], float4(0, 0, 1, 1));
}

// Every prefix of a valid binary model is refused with the loader's message, never read past its end.
TEST_F(Colmap, EveryTruncatedBinaryFileIsAnError) {
    write_binary("sparse/1");
    Json scene = minimal_scene();
    scene["views"] = {{"colmap", "sparse/1"}, {"images", "pictures"}};
    for (const char* name : {"cameras.bin", "images.bin"}) {
        const std::filesystem::path path = dir() / "sparse/1" / name;
        std::ifstream in(path, std::ios::binary);
        const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (size_t n = 0; n < whole.size(); ++n) {
            write(std::string("sparse/1/") + name, whole.substr(0, n));
            const std::string error = error_of(scene);
            EXPECT_EQ(error.rfind("scene.json: views.colmap: sparse/1/" + std::string(name) + ": ", 0), 0u)
                << n << " bytes: " << error;
        }
        write(std::string("sparse/1/") + name, whole);
    }
    EXPECT_EQ(load(scene).views.size(), 2u);
}

TEST_F(Colmap, DistortionAndBrokenFilesAreRefused) {
    write_text("sparse/0");
    write("sparse/0/cameras.txt", "# one camera\n1 OPENCV 16 12 20 22 7.5 6.5 0.1 0 0 0\n");
    Json scene = minimal_scene();
    scene["views"] = {{"colmap", "sparse/0"}, {"images", "pictures"}};
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/cameras.txt line 2: camera model OPENCV has lens "
                               "distortion (its coefficients 0.1), which Adjoint does not undo (SIMPLE_PINHOLE and "
                               "PINHOLE, or a distortion model whose coefficients are all 0: undistort the images "
                               "first, e.g. with colmap image_undistorter)");
    write("sparse/0/cameras.txt", "1 OPENCV_FISHEYE 16 12 20 22 7.5 6.5 0 0 0 0\n");
    EXPECT_NE(error_of(scene).find("camera model OPENCV_FISHEYE has lens distortion, which Adjoint does not undo"),
              std::string::npos);
    write_binary("sparse/1");
    std::string cameras;
    put<uint64_t>(cameras, 1);
    put<int32_t>(cameras, 1);
    put<int32_t>(cameras, 2);   // SIMPLE_RADIAL
    put<uint64_t>(cameras, 16);
    put<uint64_t>(cameras, 12);
    for (double p : {20.0, 7.5, 6.5, 0.25}) put(cameras, p);
    write("sparse/1/cameras.bin", cameras);
    scene["views"]["colmap"] = "sparse/1";
    EXPECT_NE(error_of(scene).find("sparse/1/cameras.bin: camera 1: camera model SIMPLE_RADIAL has lens distortion "
                                   "(its coefficients 0.25)"),
              std::string::npos)
        << error_of(scene);
    write_binary("sparse/1");
    std::string images;
    put<uint64_t>(images, 1);
    put<int32_t>(images, 1);
    for (double v : {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0}) put(images, v);
    put<uint32_t>(images, 1);
    images.append("a.png", 6);
    put<uint64_t>(images, 1'000'000'000'000ull);   // points past the end: refused before reading them
    write("sparse/1/images.bin", images);
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/1/images.bin: image 1 (a.png): the file ends early");
    images.resize(8 + 2);   // cut inside the first record's id: named by its place, the id unread
    write("sparse/1/images.bin", images);
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/1/images.bin: image record 1 of 1: the file ends "
                               "early");
    write_text("sparse/0");
    write("sparse/0/cameras.txt", "1 FOO 16 12 20 22 7.5 6.5\n");
    scene["views"]["colmap"] = "sparse/0";
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/cameras.txt line 1: unknown camera model FOO "
                               "(expected SIMPLE_PINHOLE or PINHOLE, or one of COLMAP's other models, which have "
                               "lens distortion)");
    write_text("sparse/0");
    // Each image takes two lines: images on consecutive lines would lose every second one.
    write("sparse/0/images.txt", "1 1 0 0 0 0 0 5 1 b.png\n2 1 0 0 0 0 0 5 2 a.png\n3 1 0 0 0 0 0 6 2 a.png\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/images.txt line 2: expected the 2D points of "
                               "the image on line 1 (X Y POINT3D_ID triplets, or an empty line): each image takes "
                               "two lines");
    write("sparse/0/images.txt", "1 1 0 0 0 0 0 5 1 b.png\n\n1 1 0 0 0 0 0 5 2 a.png\n\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/images.txt line 3: image id 1 is also "
                               "sparse/0/images.txt line 1's");
    write("sparse/0/images.txt", "1 1 0 0 0 0 0 5 1 b.png\n\n2 1 0 0 0 0 0 5 2 b.png\n\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/images.txt line 3: image b.png is also "
                               "sparse/0/images.txt line 1's");
    write("sparse/0/images.txt", "1 1 0 0 0 0 0 5 9 a.png\n\n");
    scene["views"]["colmap"] = "sparse/0";
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/images.txt line 1: no camera 9");
    scene["views"]["colmap"] = "nowhere";
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: nowhere: has neither cameras.txt nor cameras.bin (a COLMAP "
                               "sparse model's folder)");
}

// A camera whose focal length is not positive, and a model without its images file.
TEST_F(Colmap, NonPositiveFocalLengthsAndAMissingImagesFileAreRefused) {
    Json scene = minimal_scene();
    scene["views"] = {{"colmap", "sparse/0"}, {"images", "pictures"}};
    write_text("sparse/0");
    write("sparse/0/cameras.txt", "1 PINHOLE 16 12 20 0 7.5 6.5\n2 SIMPLE_PINHOLE 8 6 9 4 3\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/cameras.txt line 1: focal lengths must be > 0");
    write("sparse/0/cameras.txt", "1 PINHOLE 16 12 20 22 7.5 6.5\n2 SIMPLE_PINHOLE 8 6 -9 4 3\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/cameras.txt line 2: focal lengths must be > 0");
    // Finite as a double, infinite as the float a view keeps (the view rendered nothing, exit 0).
    write("sparse/0/cameras.txt", "1 PINHOLE 16 12 20 22 1e300 6.5\n2 SIMPLE_PINHOLE 8 6 9 4 3\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/cameras.txt line 1: a parameter is not a finite "
                               "32-bit float");
    // The shortest focal length taken, as COLMAP's doubles give it (0.001 lies below the float 0.001).
    write("sparse/0/cameras.txt", "1 PINHOLE 16 12 0.001 0.001 7.5 6.5\n2 SIMPLE_PINHOLE 8 6 9 4 3\n");
    EXPECT_NO_THROW(load(scene));
    // Narrower than 0.001 degrees across the camera's own 12 rows: the views rendered black.
    write("sparse/0/cameras.txt", "1 PINHOLE 16 12 20 1e30 7.5 6.5\n2 SIMPLE_PINHOLE 8 6 9 4 3\n");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0/cameras.txt line 1: fy is 1e+30 pixels, above "
                               "687549.3: a field of view narrower than 0.001 degrees across 12 pixels");
    write_text("sparse/0");
    std::filesystem::remove(dir() / "sparse/0/images.txt");
    EXPECT_EQ(error_of(scene), "scene.json: views.colmap: sparse/0: cannot read sparse/0/images.txt: No such file or "
                               "directory");
}

TEST(TargetImages, BoxResamplingAveragesTheFootprint) {
    LinearImage image;
    image.width = 3;
    image.height = 2;
    for (float v : {0.0f, 3.0f, 6.0f, 9.0f, 12.0f, 15.0f}) image.texels.push_back(float4(v, 2 * v, 0, 1));
    // 3 → 2 columns: output 0 covers [0, 1.5): (1·a + 0.5·b) / 1.5; 2 → 1 rows: the mean of both.
    const LinearImage out = detail::resample_box(image, 2, 1);
    ASSERT_EQ(out.texels.size(), 2u);
    EXPECT_FLOAT_EQ(out.texels[0].x, ((0 + 0.5f * 3) / 1.5f + (9 + 0.5f * 12) / 1.5f) / 2);
    EXPECT_FLOAT_EQ(out.texels[1].x, ((0.5f * 3 + 6) / 1.5f + (0.5f * 12 + 15) / 1.5f) / 2);
    EXPECT_FLOAT_EQ(out.texels[1].y, 2 * out.texels[1].x);
    EXPECT_FLOAT_EQ(out.texels[0].w, 1);
    // Up by 2: every input pixel covers two outputs exactly.
    const LinearImage up = detail::resample_box(image, 6, 4);
    EXPECT_FLOAT_EQ(up.texels[0].x, 0);
    EXPECT_FLOAT_EQ(up.texels[3].x, 3);
    EXPECT_FLOAT_EQ(up.texels[3 * 6 + 5].x, 15);
}

TEST_F(Cameras, RgbaTargetsAreCompositedAndResampledToTheViews) {
    Json scene = minimal_scene();   // 8x8 views
    scene["background"] = {0, 0, 1};
    // 16x16: the left half opaque white, the right half transparent red; the transparent half becomes the
    // background and alpha 0, and each target pixel is the mean of a 2x2 block.
    std::vector<uint8_t> rgba;
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x) {
            if (x < 8) rgba.insert(rgba.end(), {255, 255, 255, 255});
            else rgba.insert(rgba.end(), {255, 0, 0, 0});
        }
    write_png("target.png", 16, 16, 4, rgba);
    scene["optimize"] = {{"target", {{"images", {"target.png"}}}}, {"mask", "alpha"},
                         {"parameters", {{"materials.base.albedo", {{"init", {1, 1, 1}}}}}}};
    const Scene s = load(scene);
    EXPECT_TRUE(s.optimize->mask_alpha);
    const LinearImage& t = s.optimize->target_images.at(0);
    ASSERT_EQ(t.width, 8u);
    ASSERT_EQ(t.height, 8u);
    EXPECT_EQ(t.texels[0], float4(1, 1, 1, 1));
    EXPECT_EQ(t.texels[7], float4(0, 0, 1, 0));
    scene["optimize"]["loss"] = "silhouette";
    EXPECT_EQ(error_of(scene), "scene.json: optimize.mask: the mask leaves pixels out of a colour loss; the "
                               "silhouette loss compares alpha itself");
}

TEST_F(Cameras, TargetViewsReadTheDatasetsImages) {
    Json scene = minimal_scene();
    scene["camera"] = Json::parse(R"({"resolution": [4, 4]})");
    const double m0[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 5}, {0, 0, 0, 1}};
    const Json transforms = {{"camera_angle_x", 0.6},
                             {"frames", {{{"file_path", "r_0"}, {"transform_matrix", matrix_json(m0)}},
                                         {{"file_path", "r_1"}, {"transform_matrix", matrix_json(m0)}}}}};
    write("transforms.json", transforms.dump());
    write_solid_png("r_0.png", 4, 4, 255, 0, 0);
    write_solid_png("r_1.png", 2, 2, 0, 255, 0);   // another size: resampled
    scene["views"] = {{"nerf", "transforms.json"}};
    scene["optimize"] = {{"target", "views"}, {"parameters", {{"materials.base.albedo", {{"init", {1, 1, 1}}}}}}};
    const Scene s = load(scene);
    ASSERT_EQ(s.optimize->target_images.size(), 2u);
    EXPECT_EQ(s.optimize->target_files, (std::vector<std::string>{"r_0.png", "r_1.png"}));
    EXPECT_EQ(s.optimize->target_images[1].width, 4u);
    EXPECT_EQ(s.optimize->target_images[1].texels[15], float4(0, 1, 0, 1));
    std::filesystem::remove(dir() / "r_1.png");
    EXPECT_EQ(error_of(scene), "scene.json: optimize.target: transforms.json: frames[1].file_path: cannot read "
                               "r_1.png: No such file or directory");
    // Without w and h the field of view is in the views' square pixels: an image of another aspect is refused.
    write_solid_png("r_1.png", 4, 3, 0, 255, 0);
    EXPECT_EQ(error_of(scene), "scene.json: optimize.target: transforms.json: frames[1].file_path: r_1.png is 4x3, "
                               "another aspect than the views' 4x4, and the dataset gives no image size (w, h) for "
                               "its field of view: give w and h, or a camera.resolution of the images' aspect");
}

// camera_angle_x with w and h: square pixels of the dataset's images, scaled to the views as fl_x would be, so that
// views of another aspect stretch as the resampled images do (the same intrinsics as fl_x = fl_y for that angle).
TEST_F(Cameras, NerfFieldOfViewIsInTheImagesPixels) {
    Json scene = minimal_scene();
    scene["camera"] = Json::parse(R"({"resolution": [8, 6]})");
    const double m0[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 4}, {0, 0, 0, 1}};
    const double angle = 0.8, f = 0.5 * 16 / std::tan(angle / 2);
    Json transforms = {{"camera_angle_x", angle}, {"w", 16}, {"h", 16},
                       {"frames", {{{"file_path", "a.png"}, {"transform_matrix", matrix_json(m0)}}}}};
    write("transforms.json", transforms.dump());
    scene["views"] = {{"nerf", "transforms.json"}};
    const Scene s = load(scene);
    ASSERT_TRUE(s.views[0].intrinsics);
    EXPECT_NEAR(s.views[0].intrinsics->fx, f * 8 / 16, 1e-4);
    EXPECT_NEAR(s.views[0].intrinsics->fy, f * 6 / 16, 1e-4);
    transforms.erase("camera_angle_x");
    transforms["fl_x"] = f;
    write("transforms.json", transforms.dump());
    const Scene same = load(scene);
    EXPECT_NEAR(same.views[0].intrinsics->fx, s.views[0].intrinsics->fx, 1e-4);
    EXPECT_NEAR(same.views[0].intrinsics->fy, s.views[0].intrinsics->fy, 1e-4);
}

// Which keys give the focal lengths: a frame's own override the file's (its camera_angle_x was ignored where the file
// gave fl_x); per axis fl_x before camera_angle_x, fl_y before camera_angle_y before x's (fl_y was ignored beside
// camera_angle_x); w and h together (a w alone was ignored beside camera_angle_x).
TEST_F(Cameras, NerfFocalKeysOfAFrameOverrideTheFilesAndEachAxisTakesItsOwn) {
    Json scene = minimal_scene();
    scene["camera"] = Json::parse(R"({"resolution": [8, 8]})");
    scene["views"] = {{"nerf", "transforms.json"}};
    const double m0[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 4}, {0, 0, 0, 1}};
    const double angle = 0.8, f = 0.5 * 8 / std::tan(angle / 2);
    Json frame = {{"file_path", "a.png"}, {"transform_matrix", matrix_json(m0)}};
    Json framed = frame;
    framed["camera_angle_x"] = angle;
    Json transforms = {{"fl_x", 20}, {"w", 8}, {"h", 8}, {"frames", {frame, framed}}};
    write("transforms.json", transforms.dump());
    Scene s = load(scene);
    EXPECT_EQ(*s.views[0].intrinsics, (Intrinsics{20, 20, 4, 4}));
    EXPECT_NEAR(s.views[1].intrinsics->fx, f, 1e-4);
    EXPECT_NEAR(s.views[1].intrinsics->fy, f, 1e-4);
    // Axis by axis: the frame's camera_angle_x replaces the file's fl_x only; the file's fl_y stays.
    transforms["fl_y"] = 30;
    write("transforms.json", transforms.dump());
    s = load(scene);
    EXPECT_EQ(*s.views[0].intrinsics, (Intrinsics{20, 30, 4, 4}));
    EXPECT_NEAR(s.views[1].intrinsics->fx, f, 1e-4);
    EXPECT_EQ(s.views[1].intrinsics->fy, 30);
    // fl_y beside camera_angle_x, and camera_angle_y.
    transforms = {{"camera_angle_x", angle}, {"fl_y", 2 * f}, {"w", 8}, {"h", 8}, {"frames", {frame}}};
    write("transforms.json", transforms.dump());
    s = load(scene);
    EXPECT_NEAR(s.views[0].intrinsics->fx, f, 1e-4);
    EXPECT_NEAR(s.views[0].intrinsics->fy, 2 * f, 1e-4);
    transforms.erase("fl_y");
    transforms["camera_angle_y"] = 2 * angle;
    write("transforms.json", transforms.dump());
    s = load(scene);
    EXPECT_NEAR(s.views[0].intrinsics->fy, 0.5 * 8 / std::tan(angle), 1e-4);
    transforms["w"] = 0;   // named at the file's key (it was named at frames[0])
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: w: expected a number of pixels in [1, 1e6]");
    transforms["w"] = 8;
    transforms.erase("h");
    write("transforms.json", transforms.dump());
    EXPECT_EQ(error_of(scene), "scene.json: views.nerf: transforms.json: frames[0]: give the image size as w and h "
                               "together");
}

// camera.intrinsics' init and params.json's values are in pixels at the file's camera.resolution, as the camera's
// own intrinsics: --resolution (the load option, or override_resolution) scales them as it scales the camera's.
TEST_F(Cameras, IntrinsicsValuesScaleWithTheResolution) {
    Json scene = minimal_scene();
    scene["camera"]["resolution"] = {96, 64};
    scene["camera"]["intrinsics"] = {{"fx", 95.6}, {"fy", 95.6}, {"cx", 48}, {"cy", 32}};
    scene["optimize"] = {{"parameters", {{"camera.intrinsics", {{"init", {90, 100, 52, 35}}}}}}};
    LoadOptions options;
    options.resolution = Resolution{192, 128};
    Scene s = load_scene_from_string(scene.dump(), dir(), "scene.json", options);
    EXPECT_EQ(s.file_resolution, (Resolution{96, 64}));
    EXPECT_EQ(s.optimize->parameters[0].init, (std::vector<float>{180, 200, 104, 70}));
    override_resolution(s, {48, 32});
    EXPECT_EQ(s.optimize->parameters[0].init, (std::vector<float>{45, 50, 26, 17.5f}));
    EXPECT_EQ(value_in_file_units(s, ParameterKind::camera_intrinsics, {45, 50, 26, 17.5f}),
              (std::vector<float>{90, 100, 52, 35}));
    EXPECT_EQ(value_in_file_units(s, ParameterKind::camera_fov_y, {45}), (std::vector<float>{45}));
    write("params.json", R"({"parameters": {"camera.intrinsics": {"value": [90, 100, 52, 35]}}})");
    apply_params_file(s, dir() / "params.json");
    EXPECT_EQ(*s.camera.intrinsics, (Intrinsics{45, 50, 26, 17.5f}));
    EXPECT_EQ(*s.views[0].intrinsics, (Intrinsics{45, 50, 26, 17.5f}));
}

} // namespace adjoint::app::test
