// Scene loading under hostile input (issue 21): numbers beyond a double, deep nesting, damaged or
// unchecked OBJ/MTL lines, huge faces, files that are not regular files, images that are not PNG/JPEG.
// Each is a SceneError naming the file (and line, or JSON path), found cheaply: no crash, no hang.
#include "app/scene_fixture.h"
#include "scene/loading.h"
#include "support/error_text.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/image_io.h>
#include <adjoint/core/error.h>

#include <chrono>
#include <random>
#include <sstream>
#include <stb/stb_image.h>
#include <sys/stat.h>

namespace adjoint::app::test {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The minimal scene's text with `from` replaced by `to` (once).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

using SceneJsonLimits = SceneFiles;

TEST_F(SceneJsonLimits, ANumberBeyondADoubleNamesItsPath) {
    const std::string scene = minimal_scene().dump();
    EXPECT_EQ(error_of_text(replaced(scene, "\"resolution\":[8,8]", "\"resolution\":[8,8],\"fov_y\":1e400")),
              "scene.json: camera.fov_y: the number 1e400 is beyond the range of a double");
    EXPECT_EQ(error_of_text(replaced(scene, "\"eye\":[0,0,5]", "\"eye\":[0,-1E+999,5]")),
              "scene.json: camera.eye[1]: the number -1E+999 is beyond the range of a double");
    EXPECT_EQ(error_of_text("1e400"), "scene.json: (top level): the number 1e400 is beyond the range of a double");
}

TEST_F(SceneJsonLimits, NestingDeeperThanTheLimitIsRefusedCheaply) {
    ASSERT_EQ(detail::max_json_depth, 256u);
    const std::string scene = minimal_scene().dump();
    const auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
    // "_" keys are comments: the top-level object and 255 arrays are 256 levels, which load.
    EXPECT_NO_THROW(load_text(replaced(scene, "{\"format\":1", "{\"_deep\":" + nested(255) + ",\"format\":1")));
    const std::string deeper = error_of_text(replaced(scene, "{\"format\":1", "{\"_deep\":" + nested(256) + ",\"format\":1"));
    std::string path = "_deep";
    for (int i = 0; i < 255; ++i) path += "[0]";
    EXPECT_EQ(deeper, "scene.json: " + path + ": nested deeper than 256 levels of objects and arrays");
    // 40,000 and 100,000 levels took gigabytes before (a path per level); now the parser stops at level 257.
    for (size_t depth : {size_t(40'000), size_t(100'000)}) {
        const auto start = std::chrono::steady_clock::now();
        const std::string message = error_of_text(nested(depth));
        EXPECT_LT(seconds_since(start), 1.0) << depth;
        EXPECT_EQ(message.rfind("scene.json: [0][0][0]", 0), 0u) << message.substr(0, 80);
        EXPECT_NE(message.find("][0]: nested deeper than 256 levels of objects and arrays"), std::string::npos);
        EXPECT_LT(message.size(), 1200u);
    }
    std::string objects;
    for (int i = 0; i < 300; ++i) objects += "{\"a\":";
    std::string expected;
    for (int i = 0; i < 256; ++i) expected += i ? ".a" : "a";
    EXPECT_EQ(error_of_text(objects), "scene.json: " + expected + ": nested deeper than 256 levels of objects and arrays");
}

using ObjMtlInput = SceneFiles;

TEST_F(ObjMtlInput, AFaceIndexPastTheVerticesIsRefusedWhateverTheCorners) {
    Json j = minimal_scene();
    const std::string three = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    const std::string at = "scene.json: meshes[0].file: meshes/cube.obj line ";
    write("meshes/cube.obj", three + "v 1 1 0\nf 1 2 4 9\n");   // a quad: tinyobjloader dropped it silently
    EXPECT_EQ(error_of(j), at + "5: a face refers to position 9 of 4");
    write("meshes/cube.obj", three + "f 1 2 3\nf 1 2 3 2 7 1\n");
    EXPECT_EQ(error_of(j), at + "5: a face refers to position 7 of 3");
    write("meshes/cube.obj", three + "f 1 2 7\n");
    EXPECT_EQ(error_of(j), at + "4: a face refers to position 7 of 3");
    write("meshes/cube.obj", three + "f -1 -2 -3 -4\n");
    EXPECT_EQ(error_of(j), at + "4: a face refers to position -4 of 3 read so far");
    write("meshes/cube.obj", three + "vt 0 0\nf 1/1 2/1 3/2 1/1\n");
    EXPECT_EQ(error_of(j), at + "5: a face refers to texture coordinate 2 of 1");
    write("meshes/cube.obj", three + "vn 0 0 1\nf 1//1 2//1 3//1 2//3\n");
    EXPECT_EQ(error_of(j), at + "5: a face refers to normal 3 of 1");
    // Forward references are read as before: a face before the positions it names.
    write("meshes/cube.obj", "f 1 2 3 4\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n");
    EXPECT_EQ(load(j).meshes[0].triangles.size(), 2u);
}

TEST_F(ObjMtlInput, CoordinatesMustBeFiniteNumbersAndAllThere) {
    Json j = minimal_scene();
    const std::string at = "scene.json: meshes[0].file: meshes/cube.obj line ";
    const std::string rest = "v 1 0 0\nv 0 1 0\nf 1 2 3\n";
    write("meshes/cube.obj", "# a comment\nv 0.5 nan 0.5\n" + rest);
    EXPECT_EQ(error_of(j), at + "2: a position needs x, y and z as finite numbers (got \"v 0.5 nan 0.5\")");
    write("meshes/cube.obj", "v 0.5\n" + rest);
    EXPECT_EQ(error_of(j), at + "1: a position needs x, y and z as finite numbers (got \"v 0.5\")");
    write("meshes/cube.obj", "v 1e39 0 0\n" + rest);   // beyond a float
    EXPECT_EQ(error_of(j), at + "1: a position needs x, y and z as finite numbers (got \"v 1e39 0 0\")");
    write("meshes/cube.obj", "v 0 0 zero\n" + rest);
    EXPECT_EQ(error_of(j), at + "1: a position needs x, y and z as finite numbers (got \"v 0 0 zero\")");
    write("meshes/cube.obj", "v 0 0 0\r\n" + rest + "vn inf 0 1\n");
    EXPECT_EQ(error_of(j), at + "5: a normal needs x, y and z as finite numbers (got \"vn inf 0 1\")");
    write("meshes/cube.obj", "v 0 0 0\n" + rest + "vt 0.5 -nan\n");
    EXPECT_EQ(error_of(j), at + "5: a texture coordinate needs u [v [w]] as finite numbers (got \"vt 0.5 -nan\")");
    // What stays valid: +signs, exponents, w or colours after x y z, comments at the end of a line.
    write("meshes/cube.obj", "v +0 0 0 # a comment\nv 1e0 0 0\nv 0 1.0e0 0\nf 1 2 3\n");
    const Scene scene = load(j);
    EXPECT_EQ(scene.meshes[0].obj_positions[1].x, 1.0f);
    EXPECT_EQ(scene.meshes[0].obj_positions[2].y, 1.0f);
}

TEST_F(ObjMtlInput, AFaceOverTheCornerLimitIsRefusedBeforeTriangulating) {
    ASSERT_EQ(detail::max_face_corners, 1024u);
    Json j = minimal_scene();
    const auto polygon = [](size_t corners) {
        std::ostringstream text;
        for (size_t i = 0; i < corners; ++i) {
            const double a = 6.283185307179586 * double(i) / double(corners);
            text << "v " << std::cos(a) << " " << std::sin(a) << " 0\n";
        }
        text << "f";
        for (size_t i = 1; i <= corners; ++i) text << " " << i;
        text << "\n";
        return text.str();
    };
    write("meshes/cube.obj", polygon(100'000));   // took tinyobjloader 22 s and more
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/cube.obj line 100001: a face has 100000 corners; "
                           "at most 1024 are read");
    EXPECT_LT(seconds_since(start), 2.0);
    write("meshes/cube.obj", polygon(1024));
    start = std::chrono::steady_clock::now();
    EXPECT_EQ(load(j).meshes[0].triangles.size(), 1022u);
    EXPECT_LT(seconds_since(start), 2.0);
}

TEST_F(ObjMtlInput, MtlValuesAreCheckedNamingTheLine) {
    Json j = minimal_scene();
    j["meshes"][0]["material"] = "mtl";
    write("meshes/cube.obj", "mtllib cube.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n");
    const std::string at = "scene.json: meshes[0].material: meshes/cube.mtl line ";
    const auto mtl_error = [&](const std::string& mtl) {
        write("meshes/cube.mtl", mtl);
        return error_of(j);
    };
    EXPECT_EQ(mtl_error("newmtl a\nKd nan nan nan\n"), at + "2: Kd needs r, g and b, or one grey value, as finite numbers >= 0 (got \"Kd nan nan nan\")");
    EXPECT_EQ(mtl_error("newmtl a\nKd -1 -1 -1\n"), at + "2: Kd needs r, g and b, or one grey value, as finite numbers >= 0 (got \"Kd -1 -1 -1\")");
    EXPECT_EQ(mtl_error("newmtl a\nKd 0.5 0.5\n"), at + "2: Kd needs r, g and b, or one grey value, as finite numbers >= 0 (got \"Kd 0.5 0.5\")");
    EXPECT_EQ(mtl_error("newmtl a\nKd 1 1 1\nKs 0 inf 0\n"),
              at + "3: Ks needs r, g and b, or one grey value, as finite numbers >= 0 (got \"Ks 0 inf 0\")");
    EXPECT_EQ(mtl_error("newmtl a\nKd 1 1 1\nNs 1e400\n"), at + "3: Ns needs one finite number >= 0 (got \"Ns 1e400\")");
    EXPECT_EQ(mtl_error("newmtl a\nKd 1 1 1\nNs -2\n"), at + "3: Ns needs one finite number >= 0 (got \"Ns -2\")");
    EXPECT_EQ(mtl_error("newmtl a\nKd 1 0 0\n\nnewmtl b\nKd 0 1 0\nnewmtl a  \nKd 0 0 1\n"),
              at + "6: a second material named a (newmtl)");
    write("meshes/cube.mtl", "newmtl a\nKd 0.25 0.5 1\nKs 0.1 0.1 0.1\nNs 16\n");
    const Scene scene = load(j);
    const Material& m = scene.materials[size_t(scene.find_material("cube/a"))];
    const auto albedo = m.value("albedo");
    EXPECT_EQ(std::vector<float>(albedo.begin(), albedo.end()), (std::vector<float>{0.25f, 0.5f, 1.0f}));
    EXPECT_EQ(m.value("shininess")[0], 16.0f);
}

// What writers of OBJ and MTL files do that tinyobjloader alone misreads: 3ds Max's material names with spaces
// and '#' (tinyobjloader reads one word after usemtl, the whole rest after newmtl, so no face found its
// material), one number for a grey colour (the MTL format's rule; tinyobjloader reads red), and Windows paths.
TEST_F(ObjMtlInput, WritersConventionsAreReadAsMeant) {
    Json j = minimal_scene();
    j["meshes"][0]["material"] = "mtl";
    write("meshes/cube.obj", "# 3ds Max Wavefront OBJ Exporter\r\nmtllib .\\cube.mtl\r\nv 0 0 0\r\nv 1 0 0\r\n"
                             "v 0 1 0\r\nv 1 1 0\r\nvt 0 0\r\nvt 1 0\r\nvt 0 1\r\nvt 1 1\r\n"
                             "usemtl Material #25 \r\nf 1/1 2/2 3/3\r\nusemtl  Material #26\r\nf 2/2 4/4 3/3\r\n");
    write("meshes/cube.mtl", "newmtl Material #25\r\n\tKd 0.5\r\n\tKs 0\r\n"
                             "newmtl Material #26\r\n\tKd 0.2 0.3 0.4\r\n\tmap_Kd textures\\grass.png\r\n");
    write_solid_png("meshes/textures/grass.png", 2, 2, 40, 160, 40);
    const Scene scene = load(j);
    const int grey = scene.find_material("cube/Material #25"), textured = scene.find_material("cube/Material #26");
    ASSERT_GE(grey, 0);
    ASSERT_GE(textured, 0);
    EXPECT_EQ(scene.meshes[0].triangle_materials, (std::vector<uint32_t>{uint32_t(grey), uint32_t(textured)}));
    const auto albedo = scene.materials[size_t(grey)].value("albedo");
    EXPECT_EQ(std::vector<float>(albedo.begin(), albedo.end()), (std::vector<float>{0.5f, 0.5f, 0.5f}));
    const auto specular = scene.materials[size_t(grey)].value("specular");
    EXPECT_EQ(std::vector<float>(specular.begin(), specular.end()), (std::vector<float>{0.0f, 0.0f, 0.0f}));
    EXPECT_TRUE(scene.materials[size_t(textured)].has_textures());
    // Their parameters are addressed by those names.
    j["optimize"] = Json::parse(R"({ "parameters": { "materials.cube/Material #25.albedo": { "init": [0.3, 0.3, 0.3] } } })");
    EXPECT_EQ(load(j).optimize->parameters.at(0).target, uint32_t(grey));
    // Two materials the rest of whose newmtl lines are the same are one name given twice.
    write("meshes/cube.mtl", "newmtl Material #25\nKd 1 1 1\nnewmtl Material #25 \nKd 0 0 0\n");
    write("meshes/cube.obj", "mtllib cube.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl Material #25\nf 1 2 3\n");
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].material: meshes/cube.mtl line 3: a second material named "
                           "Material #25 (newmtl)");
}

using SceneFileLimits = SceneFiles;

TEST_F(SceneFileLimits, FilesThatAreNotRegularFilesAreRefusedBeforeReading) {
    ASSERT_EQ(max_read_file_size, uint64_t(1) << 30);
    Json j = minimal_scene();
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(::mkfifo((dir() / "meshes/pipe.obj").c_str(), 0600), 0);   // blocked forever before
    j["meshes"][0]["file"] = "meshes/pipe.obj";
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/pipe.obj is not a regular file");
    std::filesystem::create_symlink("/dev/zero", dir() / "meshes/zero.obj");   // read until memory ran out before
    j["meshes"][0]["file"] = "meshes/zero.obj";
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/zero.obj is not a regular file");
    j = minimal_scene();
    j["materials"]["base"] = {{"albedo_texture", "/dev/zero"}};
    EXPECT_EQ(error_of(j), "scene.json: materials.base.albedo_texture: /dev/zero is not a regular file");
    ASSERT_EQ(::mkfifo((dir() / "fifo.png").c_str(), 0600), 0);
    j["materials"]["base"] = {{"albedo_texture", "fifo.png"}};
    EXPECT_EQ(error_of(j), "scene.json: materials.base.albedo_texture: fifo.png is not a regular file");
    EXPECT_LT(seconds_since(start), 5.0);
    // The io layer's reader (checkpoints, params.json, loss.csv) refuses them too.
    EXPECT_EQ(adjoint::test::error_of([&] { read_file("/dev/zero"); }), "/dev/zero is not a regular file");
    EXPECT_EQ(adjoint::test::error_of([&] { read_file(dir() / "fifo.png"); }),
              (dir() / "fifo.png").string() + " is not a regular file");
}

TEST_F(SceneFileLimits, AFileOverTheSizeLimitIsRefusedUnread) {
    Json j = minimal_scene();
    {
        std::ofstream big(dir() / "meshes/big.obj");
    }
    std::filesystem::resize_file(dir() / "meshes/big.obj", (uint64_t(1) << 30) + 1);   // sparse: no disk used
    j["meshes"][0]["file"] = "meshes/big.obj";
    EXPECT_EQ(error_of(j), "scene.json: meshes[0].file: meshes/big.obj is larger than 1 GiB, the most a file read "
                           "whole may be");
}

using SceneImageFormats = SceneFiles;

TEST_F(SceneImageFormats, TexturesThatAreNotPngOrJpegAreRefusedNamingTheirFormat) {
    const std::vector<uint8_t> rgb(4 * 4 * 3, 200);
    ASSERT_TRUE(stbi_write_bmp((dir() / "t.bmp").c_str(), 4, 4, 3, rgb.data()));
    ASSERT_TRUE(stbi_write_tga((dir() / "t.tga").c_str(), 4, 4, 3, rgb.data()));
    write("t.ppm", "P6\n4 4\n255\n" + std::string(rgb.begin(), rgb.end()));
    write("t.gif", std::string("GIF89a\x04\x00\x04\x00\x00\x00\x00;", 14));
    ASSERT_TRUE(stbi_write_jpg((dir() / "t.jpg").c_str(), 4, 4, 3, rgb.data(), 90));
    Json j = minimal_scene();
    const auto texture_error = [&](const std::string& file) {
        j["materials"]["base"] = {{"albedo_texture", file}};
        return error_of(j);
    };
    const std::string at = "scene.json: materials.base.albedo_texture: ";
    const std::vector<std::pair<std::string, std::string>> formats = {
        {"t.bmp", "BMP"}, {"t.tga", "TGA"}, {"t.ppm", "PNM"}, {"t.gif", "GIF"}};
    for (const auto& [file, format] : formats)
        EXPECT_EQ(texture_error(file),
                  at + file + ": cannot decode the image: it is a " + format + " file; images must be PNG or JPEG");
    write("t.png", "not a png");
    EXPECT_EQ(texture_error("t.png"), at + "t.png: cannot decode the image: it is not a PNG or JPEG file");
    j["materials"]["base"] = {{"albedo_texture", "t.jpg"}};
    EXPECT_EQ(load(j).textures.at(0).width, 4u);
    EXPECT_EQ(image_format_of(std::string("\x89PNG\r\n\x1a\n", 8)), "PNG");
}

// Every damage to a PNG names the format and says in words what is wrong: never "no SOI" (a JPEG term that
// stb_image leaves behind), never an empty reason, never a chunk name's stray bytes.
TEST_F(SceneImageFormats, ADamagedPngSaysSoInWords) {
    std::vector<uint8_t> pixels(16 * 16 * 3);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i * 7);
    write_png("good.png", 16, 16, 3, pixels);
    const std::string good = read_file(dir() / "good.png");
    std::mt19937 random(21);
    int was_misleading = 0, refused = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::string bytes = good;
        if (trial % 3 == 0) {
            bytes.resize(8 + random() % (good.size() - 8));
        } else {
            for (int k = 0; k < 1 + int(random() % 4); ++k) bytes[8 + random() % (good.size() - 8)] = char(random());
        }
        int w = 0, h = 0, n = 0;
        stbi_uc* raw = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &w, &h, &n, 3);
        const std::string stb_reason = raw ? "" : stbi_failure_reason();
        stbi_image_free(raw);
        was_misleading += !raw && (stb_reason == "no SOI" || stb_reason.empty());
        try {
            decode_image_linear(bytes, "t.png");
        } catch (const Error& e) {
            ++refused;
            const std::string message = e.what();
            ASSERT_EQ(message.rfind("t.png: cannot decode the PNG image: the file is ", 0), 0u) << message;
            EXPECT_EQ(message.find("SOI"), std::string::npos) << message;
            EXPECT_TRUE(std::all_of(message.begin(), message.end(), [](char c) { return c >= ' ' && c <= '~'; }))
                << message;
        }
    }
    EXPECT_GT(was_misleading, 0);   // the cases the old messages got wrong are among them
    EXPECT_GT(refused, 1000);
    std::string cut = good.substr(0, good.size() - 20);
    EXPECT_EQ(adjoint::test::error_of([&] { decode_image_linear(cut, "t.png"); }),
              "t.png: cannot decode the PNG image: the file is cut short");
}

} // namespace
} // namespace adjoint::app::test
