// Scene-loader tests' fixture: a temporary folder to write scene files, OBJ/MTL text and PNGs into.
#pragma once
#include <adjoint/app/scene.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stb/stb_image_write.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace adjoint::app::test {

using Json = nlohmann::ordered_json;

// A cube of side 2 with per-face normals and texture coordinates: 8 positions, 6 normals, 4 texcoords,
// 6 quads (12 triangles, 24 distinct corners).
inline const char* cube_obj = R"(# cube
v -1 -1 -1
v  1 -1 -1
v  1  1 -1
v -1  1 -1
v -1 -1  1
v  1 -1  1
v  1  1  1
v -1  1  1
vt 0 0
vt 1 0
vt 1 1
vt 0 1
vn 0 0 -1
vn 0 0 1
vn -1 0 0
vn 1 0 0
vn 0 -1 0
vn 0 1 0
f 1/1/1 4/2/1 3/3/1 2/4/1
f 5/1/2 6/2/2 7/3/2 8/4/2
f 1/1/3 5/2/3 8/3/3 4/4/3
f 2/1/4 3/2/4 7/3/4 6/4/4
f 1/1/5 2/2/5 6/3/5 5/4/5
f 4/1/6 8/2/6 7/3/6 3/4/6
)";

// The same cube's positions and faces, without normals or texture coordinates.
inline const char* bare_cube_obj = R"(v -1 -1 -1
v  1 -1 -1
v  1  1 -1
v -1  1 -1
v -1 -1  1
v  1 -1  1
v  1  1  1
v -1  1  1
f 1 4 3 2
f 5 6 7 8
f 1 5 8 4
f 2 3 7 6
f 1 2 6 5
f 4 8 7 3
)";

class SceneFiles : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = std::filesystem::temp_directory_path() /
               ("adjoint_scene_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
                std::to_string(::getpid()));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    const std::filesystem::path& dir() const { return dir_; }

    void write(const std::string& relative, const std::string& text) {
        const auto path = dir_ / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << text;
    }

    // An 8-bit PNG with `channels` channels per pixel, rows top first.
    void write_png(const std::string& relative, int width, int height, int channels, const std::vector<uint8_t>& data) {
        ASSERT_EQ(data.size(), static_cast<size_t>(width * height * channels));
        const auto path = dir_ / relative;
        std::filesystem::create_directories(path.parent_path());
        ASSERT_TRUE(stbi_write_png(path.c_str(), width, height, channels, data.data(), width * channels));
    }
    void write_solid_png(const std::string& relative, int width, int height, uint8_t r, uint8_t g, uint8_t b) {
        std::vector<uint8_t> data;
        for (int i = 0; i < width * height; ++i) data.insert(data.end(), {r, g, b});
        write_png(relative, width, height, 3, data);
    }

    Scene load(const Json& scene) { return load_scene_from_string(scene.dump(2), dir_, "scene.json"); }
    Scene load_text(const std::string& text) { return load_scene_from_string(text, dir_, "scene.json"); }

    // The message of the SceneError that loading throws ("" and a test failure when none is thrown).
    std::string error_of_text(const std::string& text) {
        try {
            load_text(text);
        } catch (const SceneError& e) {
            return e.what();
        }
        ADD_FAILURE() << "the scene loaded";
        return "";
    }
    std::string error_of(const Json& scene) { return error_of_text(scene.dump(2)); }

    // A small valid scene: one cube with a plain material, one point light; its files written.
    Json minimal_scene() {
        write("meshes/cube.obj", cube_obj);
        return Json::parse(R"({
          "format": 1,
          "camera": { "eye": [0, 0, 5], "target": [0, 0, 0], "resolution": [8, 8] },
          "materials": { "base": { "albedo": [0.5, 0.5, 0.5] } },
          "meshes": [ { "name": "cube", "file": "meshes/cube.obj", "material": "base" } ],
          "lights": [ { "name": "key", "type": "point", "position": [2, 3, 2] } ]
        })");
    }

private:
    std::filesystem::path dir_;
};

inline float length3(float3 v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

} // namespace adjoint::app::test
