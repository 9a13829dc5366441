// The parameter kinds' descriptors: every kind reads and writes its scene value, sizes without building
// textures, ranges, the device layout's slots, and params.json back onto a scene through the one reader.
#include "app/scene_fixture.h"
#include "render/scene_data.h"

#include <adjoint/app/atomic_file.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/plugins.h>
#include <adjoint/app/params_file.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace adjoint::app::test {
namespace {

class ParameterKinds : public SceneFiles {
protected:
    // Every kind applies somewhere: a plain and a textured material, point, directional, ambient and sh lights,
    // a mesh with vertex colours, the camera as the only view.
    Scene every_kind_scene() {
        Json j = minimal_scene();
        write_png("textures/t.png", 2, 2, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255, 188, 188, 188});
        j["materials"]["skin"] = {{"albedo_texture", "textures/t.png"}};
        j["meshes"].push_back(
            {{"name", "ball"}, {"file", "meshes/cube.obj"}, {"material", "skin"}, {"vertex_colors", true}});
        j["lights"].push_back({{"name", "sun"}, {"type", "directional"}, {"direction", {0, -1, 0}}});
        j["lights"].push_back({{"name", "amb"}, {"type", "ambient"}, {"color", {0.1, 0.1, 0.1}}});
        j["lights"].push_back({{"name", "sky"},
                               {"type", "sh"},
                               {"coefficients", {{0.5, 0.5, 0.5}, {0.1, 0.2, 0.3}, {-0.1, 0, 0.1}, {0.05, 0.05, 0}}}});
        write_png("textures/world.png", 4, 2, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255, 188, 188, 188,
                                                  10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120});
        j["lights"].push_back({{"name", "world"}, {"type", "environment"}, {"file", "textures/world.png"},
                               {"rotation", 15}});
        return load(j);
    }

    // The names of a collection's targets, in order.
    static std::vector<std::string> target_names(const Scene& scene, ParameterCollection c) {
        std::vector<std::string> names;
        if (c == ParameterCollection::materials)
            for (const Material& m : scene.materials) names.push_back(m.name);
        if (c == ParameterCollection::lights)
            for (const Light& l : scene.lights) names.push_back(l.name);
        if (c == ParameterCollection::meshes)
            for (const Mesh& m : scene.meshes) names.push_back(m.name);
        if (c == ParameterCollection::camera) names.push_back("");
        return names;
    }
    static std::string path_of(ParameterCollection c, const std::string& name, const char* property) {
        const std::string collection = collection_name(c);
        return c == ParameterCollection::camera ? collection + "." + property : collection + "." + name + "." + property;
    }

    // Per kind, every parameter the scene has of it (the targets it applies to).
    static std::map<ParameterKind, std::vector<Parameter>> every_parameter(const Scene& scene) {
        std::map<ParameterKind, std::vector<Parameter>> out;
        for (const ParameterKindInfo& k : parameter_kinds()) {
            if (k.collection == ParameterCollection::materials) continue;
            for (const std::string& name : target_names(scene, k.collection))
                if (auto p = find_parameter(scene, path_of(k.collection, name, k.property))) out[k.kind].push_back(*p);
        }
        for (const Material& m : scene.materials) {   // a material's properties and textures are its model's
            const MaterialModel& model = material_model(m.model);
            std::vector<std::string_view> names;
            for (const MaterialProperty& q : model.properties) names.push_back(q.name);
            for (const MaterialTexture& t : model.textures) names.push_back(t.name);
            for (std::string_view name : names)
                if (auto p = find_parameter(scene, "materials." + m.name + "." + std::string(name))) out[p->kind].push_back(*p);
        }
        return out;
    }

    // A value of the parameter's shape unlike the scene's, inside the kind's range.
    static std::vector<float> another_value(const Parameter& p, const std::vector<float>& value) {
        const ParameterKindInfo& k = kind_info(p.kind);
        if (k.kind == ParameterKind::mesh_rotation) return {0.5f, 0.5f, 0.5f, 0.5f};
        if (k.kind == ParameterKind::light_direction) return {0, 0, -1};
        std::vector<float> v;
        for (size_t i = 0; i < value.size(); ++i)
            v.push_back(std::clamp(value[i] * 0.5f + 0.25f * float(i % 3 + 1), p.lo, p.hi));
        return v;
    }
};

TEST_F(ParameterKinds, TheTableIsInKindOrderAndFindsEveryPath) {
    ASSERT_EQ(parameter_kinds().size(), parameter_kind_count);
    for (size_t i = 0; i < parameter_kind_count; ++i) {
        const ParameterKindInfo& k = parameter_kinds()[i];
        EXPECT_EQ(size_t(k.kind), i);
        EXPECT_EQ(&kind_info(k.kind), &k);
        EXPECT_EQ(find_kind(collection_name(k.collection), k.property), &k) << k.property;
        EXPECT_STREQ(parameter_property(k.kind), k.property);
        EXPECT_LT(k.lo, k.hi) << k.property;
    }
    EXPECT_EQ(find_kind("lights", "colour"), nullptr);
    EXPECT_EQ(find_kind("camera", "position"), nullptr);
}

TEST_F(ParameterKinds, RangesAreTheFormats) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    const auto range = [](ParameterKind k) { return std::pair(kind_info(k).lo, kind_info(k).hi); };
    EXPECT_EQ(range(ParameterKind::material_texture), std::pair(0.0f, 1.0f));
    // A material property's range is its model's (a Parameter carries it).
    const Scene scene = every_kind_scene();
    const auto range_of = [&](const char* path) {
        const Parameter p = find_parameter(scene, path).value();
        return std::pair(p.lo, p.hi);
    };
    EXPECT_EQ(range_of("materials.base.albedo"), std::pair(0.0f, 1.0f));
    EXPECT_EQ(range_of("materials.base.specular"), std::pair(0.0f, 1.0f));
    EXPECT_EQ(range_of("materials.base.shininess"), std::pair(1.0f, 4096.0f));
    EXPECT_EQ(range_of("lights.key.intensity"), std::pair(0.0f, inf));
    EXPECT_EQ(range(ParameterKind::light_color), std::pair(0.0f, inf));
    EXPECT_EQ(range(ParameterKind::light_intensity), std::pair(0.0f, inf));
    EXPECT_EQ(range(ParameterKind::camera_fov_y), std::pair(1.0f, 179.0f));
    EXPECT_EQ(range(ParameterKind::mesh_translation), std::pair(-inf, inf));
    EXPECT_EQ(kind_info(ParameterKind::mesh_rotation).metric, ErrorMetric::geodesic_angle);
    EXPECT_EQ(kind_info(ParameterKind::mesh_rotation).perturbation, Perturbation::rotation);
    EXPECT_EQ(kind_info(ParameterKind::material_texture).storage, ParameterStorage::texture);
    EXPECT_STREQ(error_units(ErrorMetric::geodesic_angle), "radians");
    // A light's rotation is an angle in degrees, off the shorter way round: 355 against 0 is 5, 725 against 0 is 5.
    const ParameterKindInfo& turn = kind_info(ParameterKind::light_rotation);
    EXPECT_EQ(turn.metric, ErrorMetric::wrapped_degrees);
    EXPECT_EQ(error_unit(turn), ErrorUnit::degrees);
    const float zero = 0, near_full = 355, twice = 725, minus = -190;
    EXPECT_NEAR(error_in_units(turn, &near_full, &zero, 1), 5.0, 1e-9);
    EXPECT_NEAR(error_in_units(turn, &twice, &zero, 1), 5.0, 1e-9);
    EXPECT_NEAR(error_in_units(turn, &minus, &zero, 1), 170.0, 1e-9);
    // A directional light's direction: the angle between the two, their lengths apart (the shading normalizes
    // it, and Adam lets the length drift). A recovered sun 0.948 long read as 5.2% off as a relative error.
    const ParameterKindInfo& sun = kind_info(ParameterKind::light_direction);
    EXPECT_EQ(sun.metric, ErrorMetric::direction_angle);
    EXPECT_EQ(error_unit(sun), ErrorUnit::degrees);
    EXPECT_TRUE(error_measured_on_host(sun.metric));
    const float truth[3] = {0.487f, -0.811f, -0.324f}, longer[3] = {0.974f, -1.622f, -0.648f},
                recovered[3] = {0.461f, -0.769f, -0.307f}, across[3] = {-0.487f, 0.811f, 0.324f},
                askew[3] = {0.487f, -0.811f, 0.676f};
    EXPECT_NEAR(error_in_units(sun, longer, truth, 3), 0.0, 1e-3);
    EXPECT_LT(error_in_units(sun, recovered, truth, 3), 0.1);
    EXPECT_NEAR(error_in_units(sun, across, truth, 3), 180.0, 1e-3);
    const double cosine = (0.487 * 0.487 + 0.811 * 0.811 - 0.324 * 0.676) /
                          (std::sqrt(0.487 * 0.487 + 0.811 * 0.811 + 0.324 * 0.324) *
                           std::sqrt(0.487 * 0.487 + 0.811 * 0.811 + 0.676 * 0.676));
    EXPECT_NEAR(error_in_units(sun, askew, truth, 3), std::acos(cosine) * 180.0 / M_PI, 1e-4);
}

TEST_F(ParameterKinds, EveryKindReadsAndWritesItsValue) {
    Scene scene = every_kind_scene();
    const auto parameters = every_parameter(scene);
    for (const ParameterKindInfo& k : parameter_kinds()) {
        if (k.kind == ParameterKind::camera_intrinsics) continue;   // a camera with intrinsics: below
        ASSERT_TRUE(parameters.count(k.kind)) << "no target for " << k.property;
        for (const Parameter& p : parameters.at(k.kind)) {
            SCOPED_TRACE(p.path);
            const std::vector<float> value = parameter_value(scene, p);
            EXPECT_EQ(value.size(), p.size);
            if (k.kind != ParameterKind::material_value) {   // from sizes alone (a material's slot holds all its values)
                EXPECT_EQ(k.size(scene, k.element(scene, p.target, p.property)), p.size);
            }
            const std::vector<float> other = another_value(p, value);
            ASSERT_NE(other, value);
            set_parameter_value(scene, p, other);
            EXPECT_EQ(parameter_value(scene, p), other);
            set_parameter_value(scene, p, value);
            EXPECT_EQ(parameter_value(scene, p), value);
        }
    }
    // Which targets each kind applies to.
    EXPECT_EQ(parameters.at(ParameterKind::material_value).size(), 5u);   // base: 3; skin: 2 (its albedo is a texture)
    EXPECT_EQ(parameters.at(ParameterKind::material_texture).size(), 1u); // skin
    EXPECT_EQ(parameters.at(ParameterKind::light_position).size(), 1u);          // key
    EXPECT_EQ(parameters.at(ParameterKind::light_direction).size(), 1u);         // sun
    EXPECT_EQ(parameters.at(ParameterKind::light_color).size(), 5u);
    EXPECT_EQ(parameters.at(ParameterKind::light_rotation).size(), 1u);          // world
    EXPECT_EQ(parameters.at(ParameterKind::light_texture).size(), 1u);           // world
    EXPECT_EQ(parameters.at(ParameterKind::light_texture)[0].size, 24u);
    EXPECT_EQ(parameters.at(ParameterKind::light_coefficients).size(), 1u);      // sky
    EXPECT_EQ(parameters.at(ParameterKind::light_coefficients)[0].size, 12u);
    EXPECT_EQ(parameters.at(ParameterKind::mesh_vertex_colors).size(), 1u);      // ball
    EXPECT_EQ(parameters.at(ParameterKind::material_texture)[0].size, 12u);
    // A camera value sets every view, and reads back from view 0.
    const Parameter eye = parameters.at(ParameterKind::camera_eye)[0];
    set_parameter_value(scene, eye, std::vector<float>{1, 2, 3});
    EXPECT_EQ(scene.camera.eye, float3(1, 2, 3));
    EXPECT_EQ(scene.views[0].eye, float3(1, 2, 3));
    EXPECT_FALSE(find_parameter(scene, "camera.intrinsics"));   // fov_y's camera: camera.fov_y instead
}

// camera.intrinsics: a camera that gives them (fov_y refused), [fx, fy, cx, cy], set on every view.
TEST_F(ParameterKinds, TheIntrinsicsAreTheCamerasFourNumbers) {
    Json j = minimal_scene();
    j["camera"].erase("fov_y");
    j["camera"]["resolution"] = {40, 30};
    j["camera"]["intrinsics"] = {{"fx", 50}, {"fy", 45}, {"cx", 21}, {"cy", 14}};
    Scene scene = load(j);
    EXPECT_FALSE(find_parameter(scene, "camera.fov_y"));
    const Parameter p = find_parameter(scene, "camera.intrinsics").value();
    EXPECT_EQ(parameter_value(scene, p), (std::vector<float>{50, 45, 21, 14}));
    set_parameter_value(scene, p, std::vector<float>{60, 55, 20, 15});
    EXPECT_EQ(scene.views[0].intrinsics, (Intrinsics{60, 55, 20, 15}));
    EXPECT_FLOAT_EQ(scene.views[0].fov_y, fov_y_of(55, 30));
    const ParamLayout layout = make_layout(scene);
    const std::vector<float> v = gather_values(scene, layout);
    EXPECT_EQ(v[layout.of(scene, p) + 2], 20.0f);
    // Ranged per float: fx across 40 pixels, fy across 30, the principal point anywhere.
    EXPECT_EQ(parameter_value_problem(scene, p, std::vector<float>{0, 1, 2, 3}), "expected fx in [0.001, 2291831]");
    EXPECT_EQ(parameter_value_problem(scene, p, std::vector<float>{1, 1718874, 2, 3}),
              "expected fy in [0.001, 1718873.4]");
    EXPECT_EQ(parameter_value_problem(scene, p, std::vector<float>{1, 1, -1e9f, 1e9f}), "");
}

TEST_F(ParameterKinds, TheLayoutHasOneSlotPerKindAndElement) {
    const Scene scene = every_kind_scene();
    const ParamLayout layout = make_layout(scene);
    // In buffer order, back to back, but that a texture's slot starts on the next whole float4 (its rows are
    // read as float4s) and the buffer ends on one; the floats between are zeros. Packed (what checkpoints hold),
    // the slots are back to back.
    uint32_t at = 0, gaps = 0;
    std::vector<float> packed;
    const std::vector<float> values = gather_values(scene, layout);
    for (const ParamLayout::Slot& slot : layout.slots) {
        const bool texture = kind_info(slot.kind).slot == SlotSpace::textures;
        const uint32_t start = texture ? (at + 3) / 4 * 4 : at;
        for (uint32_t i = at; i < start; ++i) EXPECT_EQ(values[i], 0.0f) << "float " << i;
        gaps += start - at;
        EXPECT_EQ(slot.offset, start);
        EXPECT_EQ(layout.at(slot.kind, slot.element), slot.offset);
        packed.insert(packed.end(), values.begin() + slot.offset, values.begin() + slot.offset + slot.size);
        at = start + slot.size;
    }
    EXPECT_GT(gaps, 0u);   // the scene's textures follow slots of other sizes
    EXPECT_EQ(layout.size, (at + 3) / 4 * 4);
    EXPECT_EQ(layout.packed_size(), packed.size());
    EXPECT_EQ(layout.pack(values), packed);
    EXPECT_EQ(layout.unpack(packed), values);
    EXPECT_THROW((void)layout.unpack(values), adjoint::Error);
    for (const auto& [kind, params] : every_parameter(scene))
        for (const Parameter& p : params) {
            SCOPED_TRACE(p.path);
            const uint32_t offset = layout.of(scene, p);
            const std::vector<float> value = parameter_value(scene, p);
            ASSERT_LE(offset + value.size(), values.size());
            EXPECT_EQ(std::vector<float>(values.begin() + offset, values.begin() + offset + value.size()), value);
        }
    // Only where a kind applies: the ambient light has no position. Every material has its values (7 floats for
    // phong: albedo, specular, shininess), textured or not.
    EXPECT_EQ(layout.elements(ParameterKind::material_value), 2u);
    EXPECT_EQ(layout.slots[0].size, 7u);
    EXPECT_EQ(layout.of(scene, find_parameter(scene, "materials.skin.shininess").value()), layout.slots[1].offset + 6);
    EXPECT_EQ(layout.find(ParameterKind::light_position, 2), ParamLayout::kNoSlot);
    EXPECT_EQ(layout.find(ParameterKind::light_direction, 2), ParamLayout::kNoSlot);
    EXPECT_EQ(layout.find(ParameterKind::mesh_vertex_colors, 0), ParamLayout::kNoSlot);
    // One slot per texture, whichever kind names it: the environment map's is the light texture's.
    EXPECT_EQ(layout.elements(ParameterKind::material_texture), 2u);
    EXPECT_EQ(layout.at(ParameterKind::light_texture, 1), layout.at(ParameterKind::material_texture, 1));
    EXPECT_THROW(layout.at(ParameterKind::light_position, 1), adjoint::Error);

    // Camera slots per view, though only a single view can free them.
    Json j = minimal_scene();
    j["views"] = {{"orbit", {{"count", 3}}}};
    const Scene orbit = load(j);
    const ParamLayout per_view = make_layout(orbit);
    EXPECT_EQ(per_view.elements(ParameterKind::camera_eye), 3u);
    const std::vector<float> v = gather_values(orbit, per_view);
    for (uint32_t i = 0; i < 3; ++i)
        EXPECT_EQ(v[per_view.at(ParameterKind::camera_fov_y, i)], orbit.views[i].fov_y);
}

TEST_F(ParameterKinds, ParamsJsonAppliesBackExactly) {
    const Scene original = every_kind_scene();
    Scene changed = original;
    std::vector<ParamRecord> records;
    std::vector<Parameter> all;
    for (const auto& [kind, params] : every_parameter(original))
        for (const Parameter& p : params) {
            if (kind == ParameterKind::material_texture) {
                // Texels that 8-bit sRGB holds exactly: the scene's own, reversed.
                std::vector<float> texels = parameter_value(original, p);
                std::reverse(texels.begin(), texels.end());
                set_parameter_value(changed, p, texels);
                Image image(int(p.texture_width), int(p.texture_height), 3);
                image.pixels = texels;
                records.push_back({p.path, {}, std::nullopt, 0.5, image, std::nullopt, std::nullopt});
            } else if (kind == ParameterKind::light_texture) {
                // Radiance past 1 that RGBE holds exactly (one exponent per texel, 8-bit mantissas): a .hdr file.
                std::vector<float> texels;
                for (size_t t = 0; t < p.size / 3; ++t) texels.insert(texels.end(), {2.0f, 1.0f, 0.5f});
                set_parameter_value(changed, p, texels);
                Image image(int(p.texture_width), int(p.texture_height), 3);
                image.pixels = texels;
                ParamRecord r{p.path, {}, std::nullopt, 0.5, image, std::nullopt, std::nullopt};
                r.radiance = true;
                records.push_back(r);
            } else {
                set_parameter_value(changed, p, another_value(p, parameter_value(original, p)));
                records.push_back({p.path, parameter_value(changed, p), parameter_value(original, p), 0.25, {}, {}, {}});
            }
            all.push_back(p);
        }
    std::filesystem::create_directories(dir() / "run");
    write_params_json(dir() / "run/params.json", records);
    Scene applied = original;
    apply_params_file(applied, dir() / "run/params.json");
    for (const Parameter& p : all) EXPECT_EQ(parameter_value(applied, p), parameter_value(changed, p)) << p.path;

    const auto error_applying = [&](const std::string& text) {
        write("run/params.json", text);
        try {
            apply_params_file(applied, dir() / "run/params.json");
        } catch (const SceneError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string file = (dir() / "run/params.json").string();
    EXPECT_EQ(error_applying(R"({"parameters": {"materials.skin.albedo": {"value": [1, 1, 1]}}})"),
              file + ": parameters[\"materials.skin.albedo\"]: material skin has an albedo texture: optimize "
                     "materials.skin.albedo_texture");
    EXPECT_EQ(error_applying(R"({"parameters": {"meshes.cube.rotation": {"value": [0, 0, 0, 0]}}})"),
              file + ": parameters[\"meshes.cube.rotation\"].value: expected a non-zero quaternion [w, x, y, z]");
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.color": {"texture": "x.png"}}})"),
              file + ": parameters[\"lights.key.color\"].texture: cannot read x.png: No such file or directory");
    write_png("run/x.png", 1, 1, 3, {1, 2, 3});
    EXPECT_EQ(error_applying(R"({"parameters": {"lights.key.color": {"texture": "x.png"}}})"),
              file + ": parameters[\"lights.key.color\"].texture: only texture parameters take a texture");
}

// A data texture's PNG beside params.json: stored values where the entry says "png_values": "stored" (as
// adjoint-optimize writes them now, in 16 bits), else sRGB-encoded (as it wrote them before, and as a colour
// texture's are); either reads back as the values written: within 16 bits' rounding now (8 bits put a normal
// texture's render up to 7/255 off final.png through --params), an 8-bit level's apart before.
TEST_F(ParameterKinds, ADataTexturesPngReadsAsItsEntrySaysItWasWritten) {
    Json j = minimal_scene();
    write_png("n.png", 2, 1, 3, {128, 128, 255, 200, 90, 230});
    j["materials"]["base"] = {{"model", "pbr"}, {"base_color", {0.5, 0.5, 0.5}}, {"normal_texture", "n.png"}};
    const Scene original = load(j);
    const Parameter p = find_parameter(original, "materials.base.normal_texture").value();
    std::filesystem::create_directories(dir() / "run");
    for (const bool stored : {true, false}) {
        const std::vector<float> texels = stored ? std::vector<float>{0.123456f, 0.5f, 1, 1, 0.0123f, 0.87654f}
                                                 : std::vector<float>{60 / 255.0f, 128 / 255.0f, 1, 1, 30 / 255.0f,
                                                                      220 / 255.0f};
        Image image(2, 1, 3);
        image.pixels = texels;
        ParamRecord r{p.path, {}, std::nullopt, std::nullopt, image, std::nullopt, std::nullopt};
        r.data = stored;
        write_params_json(dir() / "run/params.json", {r});
        EXPECT_EQ(read_file(dir() / "run/params.json").find("\"png_values\": \"stored\"") != std::string::npos, stored);
        Scene applied = original;
        apply_params_file(applied, dir() / "run/params.json");
        const std::vector<float> back = parameter_value(applied, p);
        ASSERT_EQ(back.size(), texels.size());
        for (size_t i = 0; i < texels.size(); ++i)
            EXPECT_NEAR(back[i], texels[i], stored ? 8e-6f : 3e-3f) << stored << " " << i;
    }
}

} // namespace
} // namespace adjoint::app::test
