// params.json: exact text, exact float round trips, textures beside it, and named errors.
#include "app/io_test_util.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/params_file.h>

#include <cstring>
#include <limits>
#include <random>

using namespace adjoint::app;
using adjoint::app::test::error_of;
using adjoint::app::test::TempDir;

TEST(IoParams, TextIsSortedShortAndFieldOrdered) {
    std::vector<ParamRecord> records(2);
    records[0].path = "lights.key.position";
    records[0].value = {0.1f, -2.0f, 3.5f};
    records[0].true_value = std::vector<float>{0.0f, -2.0f, 3.0f};
    records[0].error = 0.125;
    records[1].path = "lights.key.intensity";  // sorts first
    records[1].value = {12.0f};
    EXPECT_EQ(format_params_json(records), R"({
  "parameters": {
    "lights.key.intensity": {
      "value": [
        12.0
      ]
    },
    "lights.key.position": {
      "value": [
        0.1,
        -2.0,
        3.5
      ],
      "true_value": [
        0.0,
        -2.0,
        3.0
      ],
      "error": 0.125
    }
  }
}
)");
}

TEST(IoParams, FloatsRoundTripBitForBit) {
    TempDir dir;
    std::mt19937 rng(3);
    std::vector<ParamRecord> records;
    std::uniform_int_distribution<uint32_t> bits;
    for (int p = 0; p < 20; ++p) {
        ParamRecord r;
        r.path = "meshes.m" + std::to_string(p) + ".vertices";
        for (int i = 0; i < 500; ++i) {
            float v;
            do {
                uint32_t b = bits(rng);
                std::memcpy(&v, &b, 4);
            } while (!std::isfinite(v));
            r.value.push_back(v);
        }
        r.value.push_back(std::numeric_limits<float>::denorm_min());
        r.value.push_back(std::numeric_limits<float>::max());
        r.value.push_back(-0.0f);
        r.error = 1.0 / 3.0;
        records.push_back(r);
    }
    write_params_json(dir / "params.json", records);
    EXPECT_NE(read_file(dir / "params.json").find("\"error\": 0.33333334\n"), std::string::npos);
    std::vector<ParamRecord> back = read_params_json(dir / "params.json");
    ASSERT_EQ(back.size(), records.size());
    std::sort(records.begin(), records.end(), [](auto& a, auto& b) { return a.path < b.path; });
    for (size_t p = 0; p < records.size(); ++p) {
        EXPECT_EQ(back[p].path, records[p].path);
        ASSERT_EQ(back[p].value.size(), records[p].value.size());
        for (size_t i = 0; i < records[p].value.size(); ++i)
            EXPECT_EQ(std::bit_cast<uint32_t>(back[p].value[i]), std::bit_cast<uint32_t>(records[p].value[i])) << p << " " << i;
        EXPECT_EQ(back[p].error, 0.33333334);   // a float's shortest text (was 0.3333333333333333)
        EXPECT_FALSE(back[p].true_value.has_value());
    }
}

TEST(IoParams, TexturesAreWrittenBesideAndReferencedByName) {
    TempDir dir;
    Image texture(4, 2, 3), truth(4, 2, 3);
    for (size_t i = 0; i < texture.pixels.size(); ++i) {
        texture.pixels[i] = srgb_to_linear(float(i * 10) / 255.0f);
        truth.pixels[i] = srgb_to_linear(float(255 - i) / 255.0f);
    }
    ParamRecord r;
    r.path = "materials.fur.albedo_texture";
    r.texture = texture;
    r.true_texture = truth;
    r.error = 0.5;
    write_params_json(dir / "params.json", {r});
    EXPECT_EQ(dir.names(), (std::vector<std::string>{"materials.fur.albedo_texture.png",
                                                      "materials.fur.albedo_texture.true.png", "params.json"}));
    EXPECT_NE(read_file(dir / "params.json").find(R"("texture": "materials.fur.albedo_texture.png")"), std::string::npos);
    std::vector<ParamRecord> back = read_params_json(dir / "params.json");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(back[0].value.empty());
    ASSERT_TRUE(back[0].texture && back[0].true_texture);
    EXPECT_EQ(back[0].texture->pixels, texture.pixels);
    EXPECT_EQ(back[0].true_texture->pixels, truth.pixels);
}

TEST(IoParams, TextureFileNamesAreSanitised) {
    EXPECT_EQ(texture_file_name("materials.fur.albedo_texture"), "materials.fur.albedo_texture.png");
    EXPECT_EQ(texture_file_name("materials.my fur/../x.albedo_texture", true), "materials.my_fur_.._x.albedo_texture.true.png");
}

TEST(IoParams, WriterRefusesBadRecordsBeforeWritingAnything) {
    TempDir dir;
    ParamRecord a;
    a.path = "lights.key.color";
    a.value = {1, 1, 1};
    EXPECT_EQ(error_of([&] { write_params_json(dir / "params.json", {a, a}); }),
              "params.json: parameter lights.key.color is given twice");
    ParamRecord both = a;
    both.texture = Image(1, 1, 3);
    EXPECT_EQ(error_of([&] { write_params_json(dir / "params.json", {both}); }),
              "params.json: parameter lights.key.color needs either a value or a texture, not both");
    ParamRecord nan = a;
    nan.value[1] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(error_of([&] { write_params_json(dir / "params.json", {nan}); }).find("lights.key.color.value[1] is not finite"),
              std::string::npos);
    EXPECT_TRUE(dir.names().empty());
}

TEST(IoParams, ReaderNamesTheFileAndJsonPath) {
    TempDir dir;
    const std::string f = (dir / "p.json").string();
    auto read_text = [&](const std::string& text) {
        write_file_atomic(dir / "p.json", text);
        return error_of([&] { read_params_json(dir / "p.json"); });
    };
    EXPECT_EQ(read_text(R"({"parameters": {"a.b": {"value": [1, "x"]}}})"), f + ": parameters[\"a.b\"].value[1]: expected a number");
    EXPECT_EQ(read_text(R"({"parameters": {"a.b": {"value": [1], "colour": 2}}})"), f + ": parameters[\"a.b\"].colour: unknown key");
    EXPECT_EQ(read_text(R"({"parameters": {"a.b": {"error": 2}}})"), f + ": parameters[\"a.b\"]: needs either \"value\" or \"texture\"");
    EXPECT_EQ(read_text(R"({"params": {}})"), f + ": parameters: required key is missing");
    EXPECT_EQ(read_text("[1]"), f + ": expected a JSON object");
    EXPECT_EQ(read_text("{").rfind(f + ": not valid JSON: ", 0), 0u);
    EXPECT_NE(read_text(R"({"parameters": {"a.b": {"texture": "gone.png"}}})").find("gone.png: No such file"), std::string::npos);
    // A hand-written scalar is a one-element value.
    write_file_atomic(dir / "p.json", std::string(R"({"parameters": {"lights.key.intensity": {"value": 7.5}}})"));
    std::vector<ParamRecord> back = read_params_json(dir / "p.json");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].value, std::vector<float>{7.5f});
}
