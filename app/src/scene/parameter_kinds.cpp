// The parameter kinds' table (parameter_kinds.h): per kind its path, shape, range, scene access, init reader,
// device slot, perturbation, error metric and storage.
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/plugins.h>

#include "io/hdr_image.h"
#include "scene/camera_parameters.h"
#include "scene/loading.h"

#include <cmath>
#include <limits>

namespace adjoint::app {

using namespace detail;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

void put3(float* out, float3 v) {
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
}
float3 get3(std::span<const float> v, size_t at = 0) { return {v[at], v[at + 1], v[at + 2]}; }
void push3(std::vector<float>& out, float3 v) { out.insert(out.end(), {v.x, v.y, v.z}); }

// ---- where a kind applies ----------------------------------------------------------------------------
// "a point light", "an ambient light", "an sh light" (a name of two letters is said letter by letter).
std::string light_type_name(const std::string& type) {
    const std::string_view vowel_sounds = type.size() <= 2 ? "aefhilmnorsx" : "aeiou";
    const bool vowel = !type.empty() && vowel_sounds.find(type[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + type + " light";
}

std::string everywhere(const Scene&, uint32_t, uint32_t) { return {}; }
// "albedo texture" from "albedo_texture".
std::string texture_words(std::string_view name) {
    std::string words(name);
    for (char& c : words) c = c == '_' ? ' ' : c;
    return words;
}
std::string with_article(const std::string& words) {
    const bool vowel = !words.empty() && std::string_view("aeiou").find(words[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + words;
}
// A material property that a texture of the material stands in for is not a parameter: the texture is.
// (The material's slot holds every property all the same.)
std::string untextured(const Scene& s, uint32_t t, uint32_t property) {
    const Material& m = s.materials[t];
    const MaterialModel& model = material_model(m.model);
    if (property == kWholeElement) return {};   // every material has its values' slot
    for (size_t i = 0; i < model.textures.size(); ++i)
        for (std::string_view replaced : model.textures[i].replaces)
            if (replaced == model.properties[property].name && m.textures[i] >= 0)
                return "material " + m.name + " has " + with_article(texture_words(model.textures[i].name)) +
                       ": optimize materials." + m.name + "." + std::string(model.textures[i].name);
    return {};
}
std::string textured(const Scene& s, uint32_t t, uint32_t texture) {
    const Material& m = s.materials[t];
    if (m.textures[texture] >= 0) return {};
    const MaterialTexture& tex = material_model(m.model).textures[texture];
    std::string instead;
    for (std::string_view replaced : tex.replaces)
        instead += (instead.empty() ? "" : " and ") + ("materials." + m.name + "." + std::string(replaced));
    return "material " + m.name + " has no " + texture_words(tex.name) + (instead.empty() ? "" : ": optimize " + instead);
}
// Lights whose type takes its vector from `key` ("position", "direction"; light-type plug-ins, plugins.h).
template <const char* Key>
std::string light_with(const Scene& s, uint32_t t, uint32_t) {
    const Light& l = s.lights[t];
    if (light_model(l.type).vector_key == Key) return {};
    std::string types;
    for (const LightModel* m : light_models())
        if (m->vector_key == Key) types += (types.empty() ? "" : " and ") + std::string(m->name);
    const bool plural = std::string_view(Key).ends_with('s');
    return "light " + l.name + " is " + light_type_name(l.type) + "; only " + types + " lights have " +
           (plural ? "" : "a ") + Key;
}
constexpr char kPosition[] = "position", kDirection[] = "direction", kCoefficients[] = "coefficients";
std::string environment_light(const Scene& s, uint32_t t, uint32_t) {
    const Light& l = s.lights[t];
    if (l.type == "environment") return {};
    return "light " + l.name + " is " + light_type_name(l.type) + "; only environment lights have a rotation";
}
std::string environment_map(const Scene& s, uint32_t t, uint32_t property) {
    const Light& l = s.lights[t];
    if (l.type != "environment")
        return "light " + l.name + " is " + light_type_name(l.type) + "; only environment lights have a texture";
    if (l.texture < 0 && property != kWholeElement)
        return "light " + l.name + " is a uniform sky (`color`); give it a map (`file`) to optimize its texture";
    return {};
}
std::string colored_mesh(const Scene& s, uint32_t t, uint32_t) {
    if (s.meshes[t].vertex_colors) return {};
    return "mesh " + s.meshes[t].name + " does not set \"vertex_colors\": true";
}

// ---- slot elements and sizes ---------------------------------------------------------------------------
uint32_t itself(const Scene&, uint32_t target, uint32_t) { return target; }
uint32_t texture_of(const Scene& s, uint32_t material, uint32_t texture) {
    return uint32_t(s.materials[material].textures[texture]);
}
uint32_t first_view(const Scene&, uint32_t, uint32_t) { return 0; }
uint32_t light_map(const Scene& s, uint32_t light, uint32_t) { return uint32_t(s.lights[light].texture); }

template <size_t N>
size_t floats(const Scene&, uint32_t) { return N; }
size_t coefficients_size(const Scene& s, uint32_t l) { return 3 * s.lights[l].coefficients.size(); }
size_t material_size(const Scene& s, uint32_t m) { return s.materials[m].values.size(); }
size_t texture_size(const Scene& s, uint32_t t) { return size_t(s.textures[t].width) * s.textures[t].height * 3; }

// ---- reads and writes, through an accessor Get(scene, index) that gives the field ----------------------
void put(float* out, float v) { *out = v; }
void put(float* out, float3 v) { put3(out, v); }
void assign(float& to, std::span<const float> v) { to = v[0]; }
void assign(float3& to, std::span<const float> v) { to = get3(v); }

template <auto Get>
void read(const Scene& s, uint32_t e, float* out) { put(out, Get(s, e)); }
template <auto Get>
void write(Scene& s, const Parameter& p, std::span<const float> v) { assign(Get(s, p.target), v); }

constexpr auto light_position = [](auto& s, uint32_t i) -> auto& { return s.lights[i].position; };
constexpr auto light_coefficients = [](auto& s, uint32_t i) -> auto& { return s.lights[i].coefficients; };
constexpr auto light_direction = [](auto& s, uint32_t i) -> auto& { return s.lights[i].direction; };
constexpr auto light_color = [](auto& s, uint32_t i) -> auto& { return s.lights[i].color; };
constexpr auto intensity = [](auto& s, uint32_t i) -> auto& { return s.lights[i].intensity; };
constexpr auto light_rotation = [](auto& s, uint32_t i) -> auto& { return s.lights[i].rotation; };
constexpr auto translation = [](auto& s, uint32_t i) -> auto& { return s.meshes[i].transform.translation; };
constexpr auto scale = [](auto& s, uint32_t i) -> auto& { return s.meshes[i].transform.scale; };
constexpr auto obj_positions = [](auto& s, uint32_t i) -> auto& { return s.meshes[i].obj_positions; };
constexpr auto obj_colors = [](auto& s, uint32_t i) -> auto& { return s.meshes[i].obj_colors; };
constexpr auto eye = [](auto& camera) -> auto& { return camera.eye; };
constexpr auto look_at = [](auto& camera) -> auto& { return camera.target; };
constexpr auto fov_y = [](auto& camera) -> auto& { return camera.fov_y; };

// The camera's values, per view: the slots hold every view's camera; a parameter reads view 0's.
template <auto Field>
void read_view(const Scene& s, uint32_t view, float* out) { put(out, Field(s.views[view])); }
// Setting a camera value sets the camera, and every view becomes the camera (a free camera is the only view).
template <auto Field>
void write_camera(Scene& s, const Parameter&, std::span<const float> v) {
    assign(Field(s.camera), v);
    for (Camera& view : s.views) {
        view.eye = s.camera.eye;
        view.target = s.camera.target;
        if (!view.intrinsics) view.fov_y = s.camera.fov_y;   // intrinsics fix their own (fov_y is refused)
    }
}

// A value that is a unit vector already, as read back, is kept: normalizing it again moved it by a rounding
// (about 1e-7), and a write of what was read flipped between two values, one pixel changing by 1.7e-4.
bool is_unit(std::span<const float> v) {
    double norm2 = 0;
    for (float x : v) norm2 += double(x) * x;
    return std::abs(norm2 - 1) <= 1e-6;
}
void write_direction(Scene& s, const Parameter& p, std::span<const float> v) {
    s.lights[p.target].direction = is_unit(v) ? get3(v) : normalize(get3(v));
}

void read_rotation_value(const Scene& s, uint32_t e, float* out) {
    const Quaternion& q = s.meshes[e].transform.rotation;
    out[0] = q.w, out[1] = q.x, out[2] = q.y, out[3] = q.z;
}
void write_rotation(Scene& s, const Parameter& p, std::span<const float> v) {
    const double norm = std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2] + double(v[3]) * v[3]);
    if (!(norm > 0)) fail("set_parameter_value: ", p.path, " is a zero quaternion");
    const float inv = is_unit(v) ? 1.0f : static_cast<float>(1.0 / norm);
    s.meshes[p.target].transform.rotation = {v[0] * inv, v[1] * inv, v[2] * inv, v[3] * inv};
}

template <auto Get>
size_t list_size(const Scene& s, uint32_t e) { return 3 * Get(s, e).size(); }
template <auto Get>
void read_list(const Scene& s, uint32_t e, float* out) {
    for (const float3& v : Get(s, e)) put3(out, v), out += 3;
}
template <auto Get>
void write_list(Scene& s, const Parameter& p, std::span<const float> v) {
    auto& values = Get(s, p.target);
    for (size_t i = 0; i < values.size(); ++i) values[i] = get3(v, 3 * i);
}
template <auto Get>
void write_positions(Scene& s, const Parameter& p, std::span<const float> v) {
    write_list<Get>(s, p, v);
    update_from_obj_positions(s.meshes[p.target]);
}

void read_texture(const Scene& s, uint32_t e, float* out) {
    for (const float4& texel : s.textures[e].texels) put3(out, float3(texel.x, texel.y, texel.z)), out += 3;
}
// A material's values: every property of its model; a parameter is one property's floats from its offset.
void read_material(const Scene& s, uint32_t m, float* out) {
    std::copy(s.materials[m].values.begin(), s.materials[m].values.end(), out);
}
void write_material(Scene& s, const Parameter& p, std::span<const float> v) {
    std::copy(v.begin(), v.end(), s.materials[p.target].values.begin() + p.offset);
}

// A texture of the parameter's resolution replaces the material's or the light's (alpha 1).
void write_image(LinearImage& t, const Parameter& p, std::span<const float> v) {
    t.width = p.texture_width;
    t.height = p.texture_height;
    t.texels.resize(size_t(t.width) * t.height);
    for (size_t i = 0; i < t.texels.size(); ++i) t.texels[i] = float4(v[3 * i], v[3 * i + 1], v[3 * i + 2], 1.0f);
}
void write_texture(Scene& s, const Parameter& p, std::span<const float> v) {
    write_image(s.textures[detail::own_texture(s, p.target, p.property)], p, v);
}
void write_light_map(Scene& s, const Parameter& p, std::span<const float> v) {
    write_image(s.textures[light_map(s, p.target, 0)], p, v);
}

const char* any_value(std::span<const float>) { return nullptr; }
const char* nonzero_quaternion(std::span<const float> v) {
    // A NaN fails the test too (it was let through, to be refused later as a "zero quaternion").
    const float norm2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    return norm2 > 0 ? nullptr : "expected a non-zero quaternion [w, x, y, z]";
}
const char* nonzero_direction(std::span<const float> v) {
    return v[0] == 0 && v[1] == 0 && v[2] == 0 ? "expected a non-zero direction" : nullptr;
}
// A scale of 0 along an axis flattens the mesh to nothing there (the scene's `scale` refuses it too).
const char* nonzero_scale(std::span<const float> v) {
    return v[0] == 0 || v[1] == 0 || v[2] == 0 ? "expected no scale component 0" : nullptr;
}

// ---- `init` readers ------------------------------------------------------------------------------------
using Init = std::vector<float>;

Init init_color(const JsonValue& init, const InitContext&, Parameter&) {
    Init out;
    push3(out, init.color());
    return out;
}
Init init_vec3(const JsonValue& init, const InitContext&, Parameter&) {
    Init out;
    push3(out, init.vec3());
    return out;
}
Init init_direction(const JsonValue& init, const InitContext&, Parameter&) {
    const float3 d = init.vec3();
    if (length(d) == 0) init.fail("expected a non-zero direction");
    Init out;
    push3(out, normalize(d));
    return out;
}
// A material property: a colour, or a plain number in the property's range in the file.
Init init_material_value(const JsonValue& init, const InitContext& context, Parameter& p) {
    return read_property(init, material_model(context.scene.materials[p.target].model).properties[p.property]);
}
Init init_nonnegative(const JsonValue& init, const InitContext&, Parameter&) {
    return {init.number_at_least(0, "a number >= 0")};
}
Init init_number(const JsonValue& init, const InitContext&, Parameter&) { return {init.number()}; }
Init init_rotation(const JsonValue& init, const InitContext&, Parameter&) {
    const Quaternion q = read_rotation(init);
    return {q.w, q.x, q.y, q.z};
}
Init init_scale(const JsonValue& init, const InitContext&, Parameter&) {
    Init out;
    push3(out, read_scale(init));
    return out;
}
// As many [r, g, b] as the sh light has coefficients.
Init init_coefficients(const JsonValue& init, const InitContext&, Parameter& p) {
    const size_t count = p.size / 3;
    if (!init.json().is_array() || init.array_size() != count)
        init.fail("expected a list of " + std::to_string(count) + " [r, g, b] (the light's coefficients)");
    Init out;
    for (size_t i = 0; i < count; ++i) {
        if (!init[i].json().is_array() || init[i].array_size() != 3) init[i].fail("expected [r, g, b]");
        for (size_t c = 0; c < 3; ++c) out.push_back(init[i][c].number());
    }
    return out;
}
// One [x, y, z] (Colors: [r, g, b] >= 0) per OBJ position.
template <bool Colors>
Init init_per_position(const JsonValue& init, const InitContext&, Parameter& p) {
    const size_t count = p.size / 3;
    const std::string shape = "expected a list of " + std::to_string(count) + " [x, y, z] (one per OBJ position)";
    if (!init.json().is_array() || init.array_size() != count) init.fail(shape);
    Init out;
    for (size_t i = 0; i < count; ++i) push3(out, Colors ? init[i].color() : init[i].vec3());
    return out;
}
// An RGB fill at the parameter's resolution, or a PNG at its own (which a given `resolution` must match).
Init init_texture(const JsonValue& init, const InitContext& context, Parameter& p) {
    Init out;
    if (init.json().is_string()) {
        const std::string file = init.nonempty_string();
        LinearImage image = load_image(context.base_dir / file, file, init);
        if (is_data_texture(context.scene, p)) as_stored(image);
        if (context.resolution_given && (image.width != p.texture_width || image.height != p.texture_height))
            init.fail(file + " is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                      ", but resolution is [" + std::to_string(p.texture_width) + ", " +
                      std::to_string(p.texture_height) + "]");
        p.texture_width = image.width;
        p.texture_height = image.height;
        p.size = size_t(image.width) * image.height * 3;
        out.reserve(p.size);
        for (const float4& t : image.texels) push3(out, float3(t.x, t.y, t.z));
        return out;
    }
    if (!init.json().is_array()) init.fail("expected an RGB fill [r, g, b] or a PNG file");
    const float3 fill = init.color();
    // A direction's fill (a normal texture: 2 texel - 1) of no length shades as the bare surface, and its texels'
    // gradient is 0 there: the run would never move.
    const float3 d(2 * fill.x - 1, 2 * fill.y - 1, 2 * fill.z - 1);
    if (material_model(context.scene.materials[p.target].model).textures[p.property].tangent_space &&
        d.x * d.x + d.y * d.y + d.z * d.z < 1e-6f)
        init.fail("expected a direction (2 texel - 1, tangent space): this fill is none; a flat normal texture is "
                  "[0.5, 0.5, 1]");
    out.reserve(p.size);
    for (size_t i = 0; i < p.size / 3; ++i) push3(out, fill);
    return out;
}
// An environment map: an RGB fill at the parameter's resolution, or an image of linear radiance (EXR, .hdr,
// PNG/JPEG) at its own; 2:1 either way.
Init init_light_map(const JsonValue& init, const InitContext& context, Parameter& p) {
    Init out;
    if (init.json().is_string()) {
        const std::string file = init.nonempty_string();
        Image image;
        try {
            image = read_hdr_image(context.base_dir / file, max_resolution);
        } catch (const std::exception& e) {
            init.fail(e.what());
        }
        if (context.resolution_given && (uint32_t(image.width) != p.texture_width ||
                                         uint32_t(image.height) != p.texture_height))
            init.fail(file + " is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                      ", but resolution is [" + std::to_string(p.texture_width) + ", " +
                      std::to_string(p.texture_height) + "]");
        p.texture_width = uint32_t(image.width);
        p.texture_height = uint32_t(image.height);
        p.size = size_t(image.width) * image.height * 3;
        out.reserve(p.size);
        for (size_t i = 0; i < size_t(image.width) * image.height; ++i) {
            const float* px = &image.pixels[i * size_t(image.channels)];
            push3(out, float3(px[0], px[image.channels > 1 ? 1 : 0], px[image.channels > 2 ? 2 : 0]));
        }
    } else {
        if (!init.json().is_array()) init.fail("expected an RGB fill [r, g, b] or an image file");
        const float3 fill = init.color();
        out.reserve(p.size);
        for (size_t i = 0; i < p.size / 3; ++i) push3(out, fill);
    }
    if (p.texture_width != 2 * p.texture_height)
        init.fail("an environment map is equirectangular: its width must be twice its height, not " +
                  std::to_string(p.texture_width) + "x" + std::to_string(p.texture_height));
    return out;
}

using C = ParameterCollection;
using K = ParameterKind;
using P = Perturbation;
using M = ErrorMetric;
using S = ParameterStorage;
using Slot = SlotSpace;

// In ParameterKind order. The ranges keep values meaningful (colours non-negative, texels and reflectances
// in [0, 1], a field of view inside (0, 180)).
constexpr ParameterKindInfo table[] = {
    {K::material_value, C::materials, "<material property>", false, 0, 1, P::direction, M::relative_l2, "", S::value,
     Slot::targets, untextured, itself, material_size, read_material, write_material, any_value, init_material_value},
    {K::material_texture, C::materials, "<material texture>", false, 0, 1, P::per_element, M::relative_l2,
     "linear RGB", S::texture, Slot::textures, textured, texture_of, texture_size, read_texture, write_texture,
     any_value, init_texture},
    {K::light_position, C::lights, "position", false, -inf, inf, P::direction, M::relative_l2, "scene units",
     S::value, Slot::targets, light_with<kPosition>, itself, floats<3>, read<light_position>,
     write<light_position>, any_value, init_vec3},
    // Its length is not rendered (the shading normalizes it), so it drifts freely: its error is an angle.
    {K::light_direction, C::lights, "direction", false, -inf, inf, P::direction, M::direction_angle, "direction",
     S::value, Slot::targets, light_with<kDirection>, itself, floats<3>, read<light_direction>,
     write_direction, nonzero_direction, init_direction},
    {K::light_coefficients, C::lights, "coefficients", false, -inf, inf, P::direction, M::relative_l2, "linear RGB",
     S::value, Slot::targets, light_with<kCoefficients>, itself, coefficients_size, read_list<light_coefficients>,
     write_list<light_coefficients>, any_value, init_coefficients},
    {K::light_rotation, C::lights, "rotation", false, -inf, inf, P::direction, M::wrapped_degrees, "degrees",
     S::value, Slot::targets, environment_light, itself, floats<1>, read<light_rotation>, write<light_rotation>,
     any_value, init_number},
    {K::light_texture, C::lights, "texture", false, 0, inf, P::per_element, M::relative_l2, "linear RGB",
     S::texture, Slot::textures, environment_map, light_map, texture_size, read_texture, write_light_map,
     any_value, init_light_map},
    {K::light_color, C::lights, "color", false, 0, inf, P::direction, M::relative_l2, "linear RGB", S::value,
     Slot::targets, everywhere, itself, floats<3>, read<light_color>, write<light_color>, any_value, init_color},
    {K::light_intensity, C::lights, "intensity", false, 0, inf, P::direction, M::relative_l2, "intensity", S::value,
     Slot::targets, everywhere, itself, floats<1>, read<intensity>, write<intensity>, any_value, init_nonnegative},
    {K::mesh_translation, C::meshes, "translation", true, -inf, inf, P::direction, M::relative_l2, "scene units",
     S::value, Slot::targets, everywhere, itself, floats<3>, read<translation>, write<translation>, any_value,
     init_vec3},
    {K::mesh_rotation, C::meshes, "rotation", true, -inf, inf, P::rotation, M::geodesic_angle, "quaternion",
     S::value, Slot::targets, everywhere, itself, floats<4>, read_rotation_value, write_rotation, nonzero_quaternion,
     init_rotation},
    {K::mesh_scale, C::meshes, "scale", true, -inf, inf, P::direction, M::relative_l2, "factor", S::value,
     Slot::targets, everywhere, itself, floats<3>, read<scale>, write<scale>, nonzero_scale, init_scale},
    {K::mesh_vertices, C::meshes, "vertices", true, -inf, inf, P::per_element, M::relative_l2, "scene units",
     S::value, Slot::targets, everywhere, itself, list_size<obj_positions>, read_list<obj_positions>,
     write_positions<obj_positions>, any_value, init_per_position<false>},
    {K::mesh_vertex_colors, C::meshes, "vertex_colors", false, -inf, inf, P::per_element, M::relative_l2,
     "linear RGB", S::value, Slot::targets, colored_mesh, itself, list_size<obj_colors>, read_list<obj_colors>,
     write_positions<obj_colors>, any_value, init_per_position<true>},
    {K::camera_eye, C::camera, "eye", true, -inf, inf, P::direction, M::relative_l2, "scene units", S::value,
     Slot::views, single_view, first_view, floats<3>, read_view<eye>, write_camera<eye>, any_value, init_vec3},
    {K::camera_target, C::camera, "target", true, -inf, inf, P::direction, M::relative_l2, "scene units", S::value,
     Slot::views, single_view, first_view, floats<3>, read_view<look_at>, write_camera<look_at>, any_value, init_vec3},
    {K::camera_fov_y, C::camera, "fov_y", true, 1, 179, P::direction, M::relative_l2, "degrees", S::value,
     Slot::views, fov_camera, first_view, floats<1>, read_view<fov_y>, write_camera<fov_y>, any_value, init_fov},
    // Ranged per float (find_parameter's Parameter::runs): fx and fy to focal lengths the camera accepts (a zero one
    // flattens the picture to a point), the principal point anywhere.
    {K::camera_intrinsics, C::camera, "intrinsics", true, -inf, inf, P::direction, M::relative_l2, "pixels", S::value,
     Slot::views, intrinsics_camera, first_view, floats<4>, read_intrinsics, write_intrinsics, any_value,
     init_intrinsics},
};
static_assert(std::size(table) == parameter_kind_count);

} // namespace

std::span<const ParameterKindInfo> parameter_kinds() { return table; }

const ParameterKindInfo& kind_info(ParameterKind kind) {
    const auto i = static_cast<size_t>(kind);
    if (i >= std::size(table) || table[i].kind != kind) fail("kind_info: unknown parameter kind ", i);
    return table[i];
}

const ParameterKindInfo* find_kind(std::string_view collection, std::string_view property) {
    for (const ParameterKindInfo& k : table)
        if (collection == collection_name(k.collection) && property == k.property) return &k;
    return nullptr;
}

const char* collection_name(ParameterCollection collection) {
    switch (collection) {
    case ParameterCollection::materials: return "materials";
    case ParameterCollection::lights: return "lights";
    case ParameterCollection::meshes: return "meshes";
    case ParameterCollection::camera: return "camera";
    }
    return "?";
}

const char* error_units(ErrorMetric metric) { return metric == ErrorMetric::relative_l2 ? "relative" : "radians"; }

} // namespace adjoint::app
