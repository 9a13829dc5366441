// Materials as their model plug-in's properties: defaults, access by name, and reading one from the scene file.
#include <adjoint/app/image_io.h>
#include <adjoint/app/plugins.h>

#include "scene/loading.h"

namespace adjoint::app {

namespace {

// The first float of a property in the model's values, or adjoint::Error.
size_t property_offset(const Material& m, std::string_view property) {
    size_t offset = 0;
    for (const MaterialProperty& p : material_model(m.model).properties) {
        if (p.name == property) return offset;
        offset += p.floats;
    }
    fail("material ", m.name, " (", m.model, ") has no property ", property);
}

uint32_t property_floats(const Material& m, std::string_view property) {
    for (const MaterialProperty& p : material_model(m.model).properties)
        if (p.name == property) return p.floats;
    return 0;
}

size_t texture_index(const Material& m, std::string_view name) {
    const auto textures = material_model(m.model).textures;
    for (size_t i = 0; i < textures.size(); ++i)
        if (textures[i].name == name) return i;
    fail("material ", m.name, " (", m.model, ") has no texture ", name);
}

} // namespace

std::span<const float> Material::value(std::string_view property) const {
    return std::span<const float>(values).subspan(property_offset(*this, property), property_floats(*this, property));
}
std::span<float> Material::value(std::string_view property) {
    return std::span<float>(values).subspan(property_offset(*this, property), property_floats(*this, property));
}
float3 Material::color(std::string_view property) const {
    const auto v = value(property);
    if (v.size() != 3) fail("material ", name, ": ", property, " is not a colour");
    return {v[0], v[1], v[2]};
}
int32_t Material::texture(std::string_view texture_name) const { return textures[texture_index(*this, texture_name)]; }
int32_t& Material::texture(std::string_view texture_name) { return textures[texture_index(*this, texture_name)]; }
bool Material::has_textures() const {
    for (int32_t t : textures)
        if (t >= 0) return true;
    return false;
}

Material make_material(std::string name, std::string_view model_name) {
    const MaterialModel& model = material_model(model_name);
    Material m;
    m.name = std::move(name);
    m.model = std::string(model.name);
    for (const MaterialProperty& p : model.properties)
        m.values.insert(m.values.end(), p.defaults.begin(), p.defaults.begin() + p.floats);
    m.textures.assign(model.textures.size(), -1);
    return m;
}

namespace detail {

namespace {

std::string model_names() {
    std::string names;
    for (const MaterialModel* m : material_models()) names += (names.empty() ? "" : ", ") + std::string(m->name);
    return names;
}

} // namespace

void as_stored(LinearImage& image) {
    for (float4& t : image.texels) t = float4(linear_to_srgb(t.x), linear_to_srgb(t.y), linear_to_srgb(t.z), t.w);
}

std::vector<float> read_property(const JsonValue& value, const MaterialProperty& property) {
    if (property.floats == 3) {
        const float3 c = value.color();
        return {c.x, c.y, c.z};
    }
    const std::string expected = "expected " + std::string(property.expected);
    if (!value.json().is_number()) value.fail(expected);
    const float x = value.number();
    if (!(x >= property.file_lo && x <= property.file_hi)) value.fail(expected);
    return {x};
}

// `materials.<name>`: the model (default phong) and its keys; a texture stands in for the properties it replaces.
Material read_material(const JsonValue& entry, const std::string& name, const std::filesystem::path& base_dir,
                       Scene& scene) {
    std::string model_name = "phong";
    if (auto m = entry.get("model")) {
        model_name = m->nonempty_string();
        if (!find_material_model(model_name))
            m->fail("unknown material model \"" + model_name + "\" (there are: " + model_names() + ")");
    }
    const MaterialModel& model = material_model(model_name);
    std::vector<std::string_view> keys{"model"};
    for (const MaterialProperty& p : model.properties) keys.push_back(p.name);
    for (const MaterialTexture& t : model.textures) keys.push_back(t.name);
    entry.expect_object(keys);
    Material material = make_material(name, model_name);
    for (size_t t = 0; t < model.textures.size(); ++t) {
        const MaterialTexture& texture = model.textures[t];
        const auto file = entry.get(texture.name);
        for (std::string_view replaced : texture.replaces)
            if (file && entry.get(replaced))
                entry.fail("give " + std::string(replaced) + " or " + std::string(texture.name) + ", not both");
        if (!file) continue;
        const std::string shown = file->nonempty_string();
        scene.textures.push_back(load_image(base_dir / shown, shown, *file));
        if (!texture.srgb) as_stored(scene.textures.back());
        material.textures[t] = static_cast<int32_t>(scene.textures.size() - 1);
    }
    for (const MaterialProperty& p : model.properties) {
        std::span<float> out = material.value(p.name);
        const auto value = entry.get(p.name);
        if (!value) {
            std::string alternative;   // a texture that stands in for it: given, or named in the error
            bool replaced = false;
            for (size_t t = 0; t < model.textures.size(); ++t)
                for (std::string_view r : model.textures[t].replaces)
                    if (r == p.name) {
                        alternative = " or " + std::string(model.textures[t].name);
                        replaced = replaced || material.textures[t] >= 0;
                    }
            if (p.required && !replaced) entry.fail("needs " + std::string(p.name) + alternative);
            continue;
        }
        const std::vector<float> v = read_property(*value, p);
        std::copy(v.begin(), v.end(), out.begin());
    }
    return material;
}

} // namespace detail

} // namespace adjoint::app
