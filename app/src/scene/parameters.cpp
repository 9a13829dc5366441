// Parameter paths: resolving `materials.<name>.albedo` and the like against a scene, reading their
// values from `optimize.parameters` and params.json, and moving values between scenes and flat floats.
#include "scene/loading.h"

#include <adjoint/app/plugins.h>
#include <cmath>

namespace adjoint::app {

using namespace detail;

namespace {

struct KindInfo {
    const char* collection; // "materials", "lights", "meshes", "camera"
    const char* property;
    ParameterKind kind;
};

constexpr KindInfo kinds[] = {
    {"materials", "albedo", ParameterKind::material_albedo},
    {"materials", "albedo_texture", ParameterKind::material_albedo_texture},
    {"materials", "specular", ParameterKind::material_specular},
    {"materials", "shininess", ParameterKind::material_shininess},
    {"lights", "position", ParameterKind::light_position},
    {"lights", "direction", ParameterKind::light_direction},
    {"lights", "color", ParameterKind::light_color},
    {"lights", "intensity", ParameterKind::light_intensity},
    {"meshes", "translation", ParameterKind::mesh_translation},
    {"meshes", "rotation", ParameterKind::mesh_rotation},
    {"meshes", "scale", ParameterKind::mesh_scale},
    {"meshes", "vertices", ParameterKind::mesh_vertices},
    {"meshes", "vertex_colors", ParameterKind::mesh_vertex_colors},
    {"camera", "eye", ParameterKind::camera_eye},
    {"camera", "target", ParameterKind::camera_target},
    {"camera", "fov_y", ParameterKind::camera_fov_y},
};

// "a point light", "an ambient light".
std::string light_type_name(const std::string& type) {
    const bool vowel = !type.empty() && std::string_view("aeiou").find(type[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + type + " light";
}

// The light types whose vector comes from `key` ("point lights"), for the message that refuses the others.
std::string light_types_with(std::string_view key) {
    std::string out;
    for (const LightModel* m : light_models())
        if (m->vector_key == key) out += (out.empty() ? "" : " and ") + std::string(m->name);
    return out + " lights";
}

std::optional<Parameter> refuse(std::string* why, std::string reason) {
    if (why) *why = std::move(reason);
    return std::nullopt;
}

void put3(std::vector<float>& out, float3 v) { out.insert(out.end(), {v.x, v.y, v.z}); }
float3 get3(std::span<const float> v, size_t at = 0) { return {v[at], v[at + 1], v[at + 2]}; }

} // namespace

bool is_geometry_parameter(ParameterKind kind) {
    switch (kind) {
    case ParameterKind::mesh_translation:
    case ParameterKind::mesh_rotation:
    case ParameterKind::mesh_scale:
    case ParameterKind::mesh_vertices:
    case ParameterKind::camera_eye:
    case ParameterKind::camera_target:
    case ParameterKind::camera_fov_y: return true;
    default: return false;
    }
}

const char* parameter_property(ParameterKind kind) {
    for (const KindInfo& info : kinds)
        if (info.kind == kind) return info.property;
    return "?";
}

std::optional<Parameter> find_parameter(const Scene& scene, std::string_view path, std::string* why) {
    const std::string unknown = "unknown parameter " + std::string(path);
    // collection.name.property; names may hold dots (the property never does).
    const size_t first = path.find('.'), last = path.rfind('.');
    if (first == std::string_view::npos) return refuse(why, unknown);
    const std::string_view collection = path.substr(0, first), property = path.substr(last + 1);
    const bool camera = collection == "camera";
    if (camera != (first == last)) return refuse(why, unknown);
    const std::string name(camera ? std::string_view() : path.substr(first + 1, last - first - 1));
    const KindInfo* info = nullptr;
    for (const KindInfo& k : kinds)
        if (collection == k.collection && property == k.property) info = &k;
    if (!info) return refuse(why, unknown);

    Parameter p;
    p.path = std::string(path);
    p.kind = info->kind;
    if (collection == "materials") {
        const int index = scene.find_material(name);
        if (index < 0) return refuse(why, unknown);
        p.target = static_cast<uint32_t>(index);
        const Material& m = scene.materials[p.target];
        if (p.kind == ParameterKind::material_albedo && m.texture >= 0)
            return refuse(why, "material " + name + " has an albedo texture: optimize materials." + name + ".albedo_texture");
        if (p.kind == ParameterKind::material_albedo_texture) {
            if (m.texture < 0)
                return refuse(why, "material " + name + " has no albedo texture: optimize materials." + name + ".albedo");
            const LinearImage& t = scene.textures[static_cast<size_t>(m.texture)];
            p.texture_width = t.width;
            p.texture_height = t.height;
            p.size = static_cast<size_t>(t.width) * t.height * 3;
        } else {
            p.size = p.kind == ParameterKind::material_shininess ? 1 : 3;
        }
    } else if (collection == "lights") {
        const int index = scene.find_light(name);
        if (index < 0) return refuse(why, unknown);
        p.target = static_cast<uint32_t>(index);
        const Light& l = scene.lights[p.target];
        const std::string_view vector_key = light_model(l.type).vector_key;
        for (std::string_view key : {"position", "direction"})
            if (info->property == key && vector_key != key)
                return refuse(why, "light " + name + " is " + light_type_name(l.type) + "; only " + light_types_with(key) +
                                       " have a " + std::string(key));
        p.size = p.kind == ParameterKind::light_intensity ? 1 : 3;
    } else if (collection == "meshes") {
        const int index = scene.find_mesh(name);
        if (index < 0) return refuse(why, unknown);
        p.target = static_cast<uint32_t>(index);
        const Mesh& m = scene.meshes[p.target];
        if (p.kind == ParameterKind::mesh_vertex_colors && !m.vertex_colors)
            return refuse(why, "mesh " + name + " does not set \"vertex_colors\": true");
        switch (p.kind) {
        case ParameterKind::mesh_rotation: p.size = 4; break;
        case ParameterKind::mesh_vertices:
        case ParameterKind::mesh_vertex_colors: p.size = 3 * m.obj_positions.size(); break;
        default: p.size = 3;
        }
    } else {
        if (scene.views.size() != 1)
            return refuse(why, "the camera can be optimized only when it is the only view (this scene has " +
                                   std::to_string(scene.views.size()) + ")");
        p.size = p.kind == ParameterKind::camera_fov_y ? 1 : 3;
    }
    return p;
}

std::vector<float> parameter_value(const Scene& scene, const Parameter& p) {
    std::vector<float> out;
    switch (p.kind) {
    case ParameterKind::material_albedo: put3(out, scene.materials[p.target].albedo); break;
    case ParameterKind::material_albedo_texture: {
        const LinearImage& t = scene.textures[static_cast<size_t>(scene.materials[p.target].texture)];
        out.reserve(t.texels.size() * 3);
        for (const float4& texel : t.texels) out.insert(out.end(), {texel.x, texel.y, texel.z});
        break;
    }
    case ParameterKind::material_specular: put3(out, scene.materials[p.target].specular); break;
    case ParameterKind::material_shininess: out.push_back(scene.materials[p.target].shininess); break;
    case ParameterKind::light_position: put3(out, scene.lights[p.target].position); break;
    case ParameterKind::light_direction: put3(out, scene.lights[p.target].direction); break;
    case ParameterKind::light_color: put3(out, scene.lights[p.target].color); break;
    case ParameterKind::light_intensity: out.push_back(scene.lights[p.target].intensity); break;
    case ParameterKind::mesh_translation: put3(out, scene.meshes[p.target].transform.translation); break;
    case ParameterKind::mesh_rotation: {
        const Quaternion& q = scene.meshes[p.target].transform.rotation;
        out = {q.w, q.x, q.y, q.z};
        break;
    }
    case ParameterKind::mesh_scale: put3(out, scene.meshes[p.target].transform.scale); break;
    case ParameterKind::mesh_vertices:
        for (const float3& v : scene.meshes[p.target].obj_positions) put3(out, v);
        break;
    case ParameterKind::mesh_vertex_colors:
        for (const float3& v : scene.meshes[p.target].obj_colors) put3(out, v);
        break;
    case ParameterKind::camera_eye: put3(out, scene.camera.eye); break;
    case ParameterKind::camera_target: put3(out, scene.camera.target); break;
    case ParameterKind::camera_fov_y: out.push_back(scene.camera.fov_y); break;
    }
    return out;
}

void set_parameter_value(Scene& scene, const Parameter& p, std::span<const float> v) {
    if (v.size() != p.size)
        fail("set_parameter_value: ", p.path, " takes ", p.size, " floats, got ", v.size());
    switch (p.kind) {
    case ParameterKind::material_albedo: scene.materials[p.target].albedo = get3(v); break;
    case ParameterKind::material_albedo_texture: {
        LinearImage& t = scene.textures[static_cast<size_t>(scene.materials[p.target].texture)];
        t.width = p.texture_width;
        t.height = p.texture_height;
        t.texels.resize(static_cast<size_t>(t.width) * t.height);
        for (size_t i = 0; i < t.texels.size(); ++i) t.texels[i] = float4(v[3 * i], v[3 * i + 1], v[3 * i + 2], 1.0f);
        break;
    }
    case ParameterKind::material_specular: scene.materials[p.target].specular = get3(v); break;
    case ParameterKind::material_shininess: scene.materials[p.target].shininess = v[0]; break;
    case ParameterKind::light_position: scene.lights[p.target].position = get3(v); break;
    case ParameterKind::light_direction: scene.lights[p.target].direction = normalize(get3(v)); break;
    case ParameterKind::light_color: scene.lights[p.target].color = get3(v); break;
    case ParameterKind::light_intensity: scene.lights[p.target].intensity = v[0]; break;
    case ParameterKind::mesh_translation: scene.meshes[p.target].transform.translation = get3(v); break;
    case ParameterKind::mesh_rotation: {
        const double norm = std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2] + double(v[3]) * v[3]);
        if (!(norm > 0)) fail("set_parameter_value: ", p.path, " is a zero quaternion");
        const float inv = static_cast<float>(1.0 / norm);
        scene.meshes[p.target].transform.rotation = {v[0] * inv, v[1] * inv, v[2] * inv, v[3] * inv};
        break;
    }
    case ParameterKind::mesh_scale: scene.meshes[p.target].transform.scale = get3(v); break;
    case ParameterKind::mesh_vertices:
    case ParameterKind::mesh_vertex_colors: {
        Mesh& mesh = scene.meshes[p.target];
        auto& values = p.kind == ParameterKind::mesh_vertices ? mesh.obj_positions : mesh.obj_colors;
        for (size_t i = 0; i < values.size(); ++i) values[i] = get3(v, 3 * i);
        update_from_obj_positions(mesh);
        break;
    }
    case ParameterKind::camera_eye: scene.camera.eye = get3(v); break;
    case ParameterKind::camera_target: scene.camera.target = get3(v); break;
    case ParameterKind::camera_fov_y: scene.camera.fov_y = v[0]; break;
    }
    if (p.kind == ParameterKind::camera_eye || p.kind == ParameterKind::camera_target ||
        p.kind == ParameterKind::camera_fov_y) {
        for (Camera& view : scene.views) {
            view.eye = scene.camera.eye;
            view.target = scene.camera.target;
            view.fov_y = scene.camera.fov_y;
        }
    }
}

namespace detail {

namespace {

// A parameter's `init`, shape-checked, as p.size floats.
std::vector<float> read_init(const JsonValue& init, const std::optional<JsonValue>& resolution,
                             const std::filesystem::path& base_dir, Parameter& p) {
    std::vector<float> out;
    switch (p.kind) {
    case ParameterKind::material_albedo:
    case ParameterKind::material_specular:
    case ParameterKind::light_color: put3(out, init.color()); break;
    case ParameterKind::light_position:
    case ParameterKind::mesh_translation:
    case ParameterKind::camera_eye:
    case ParameterKind::camera_target: put3(out, init.vec3()); break;
    case ParameterKind::light_direction: {
        const float3 d = init.vec3();
        if (length(d) == 0) init.fail("expected a non-zero direction");
        put3(out, normalize(d));
        break;
    }
    case ParameterKind::material_shininess:
    case ParameterKind::light_intensity: out.push_back(init.number_at_least(0, "a number >= 0")); break;
    case ParameterKind::camera_fov_y: {
        const float fov = init.number_above(0, "a number of degrees in (0, 180)");
        if (!(fov < 180)) init.fail("expected a number of degrees in (0, 180)");
        out.push_back(fov);
        break;
    }
    case ParameterKind::mesh_rotation: {
        const Quaternion q = read_rotation(init);
        out = {q.w, q.x, q.y, q.z};
        break;
    }
    case ParameterKind::mesh_scale: put3(out, read_scale(init)); break;
    case ParameterKind::mesh_vertices:
    case ParameterKind::mesh_vertex_colors: {
        const size_t count = p.size / 3;
        const std::string shape = "expected a list of " + std::to_string(count) + " [x, y, z] (one per OBJ position)";
        if (!init.json().is_array() || init.array_size() != count) init.fail(shape);
        for (size_t i = 0; i < count; ++i)
            put3(out, p.kind == ParameterKind::mesh_vertices ? init[i].vec3() : init[i].color());
        break;
    }
    case ParameterKind::material_albedo_texture: {
        if (init.json().is_string()) {
            const std::string file = init.nonempty_string();
            const LinearImage image = load_image(base_dir / file, file, init);
            if (resolution && (image.width != p.texture_width || image.height != p.texture_height))
                init.fail(file + " is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                          ", but resolution is [" + std::to_string(p.texture_width) + ", " +
                          std::to_string(p.texture_height) + "]");
            p.texture_width = image.width;
            p.texture_height = image.height;
            p.size = static_cast<size_t>(image.width) * image.height * 3;
            out.reserve(p.size);
            for (const float4& t : image.texels) out.insert(out.end(), {t.x, t.y, t.z});
        } else {
            if (!init.json().is_array()) init.fail("expected an RGB fill [r, g, b] or a PNG file");
            const float3 fill = init.color();
            out.reserve(p.size);
            for (size_t i = 0; i < p.size / 3; ++i) put3(out, fill);
        }
        break;
    }
    }
    return out;
}

} // namespace

std::vector<Parameter> read_parameters(const JsonValue& parameters, const std::filesystem::path& base_dir,
                                       const Scene& scene) {
    if (!parameters.json().is_object()) parameters.fail("expected an object of parameter paths");
    std::vector<Parameter> out;
    for (const auto& [path, unused] : parameters.json().items()) {
        if (!path.empty() && path[0] == '_') continue;
        const JsonValue entry = parameters.child(path);
        std::string why;
        std::optional<Parameter> found = find_parameter(scene, path, &why);
        if (!found) (why.rfind("unknown parameter", 0) == 0 ? parameters : entry).fail(why);
        Parameter p = std::move(*found);
        entry.expect_object({"init", "perturb", "lr", "resolution"});
        const auto init = entry.get("init");
        const auto perturb = entry.get("perturb");
        const auto resolution = entry.get("resolution");
        if (init && perturb) entry.fail("give init or perturb, not both");
        if (!init && !perturb) entry.fail("needs init (a start value) or perturb (a random offset from the scene's value)");
        if (resolution) {
            if (p.kind != ParameterKind::material_albedo_texture)
                resolution->fail("only texture parameters take a resolution");
            const Resolution r = resolution->resolution();
            if (perturb && (r.width != p.texture_width || r.height != p.texture_height))
                resolution->fail("perturb starts from the scene's texture (" + std::to_string(p.texture_width) + "x" +
                                 std::to_string(p.texture_height) + "); use init for another resolution");
            p.texture_width = r.width;
            p.texture_height = r.height;
            p.size = static_cast<size_t>(r.width) * r.height * 3;
        }
        if (init) p.init = read_init(*init, resolution, base_dir, p);
        if (perturb) p.perturb = perturb->number_at_least(0, "a number >= 0");
        if (auto lr = entry.get("lr")) p.lr = lr->number_above(0, "a number > 0");
        out.push_back(std::move(p));
    }
    if (out.empty()) parameters.fail("expected at least one parameter");
    return out;
}

} // namespace detail

void apply_params_file(Scene& scene, const std::filesystem::path& params_json) {
    const std::string display = params_json.string();
    std::string reason;
    const std::optional<std::string> text = try_read_file(params_json, display, reason);
    if (!text) throw SceneError("", "", reason);
    const Json document = parse_json(*text, display);
    const JsonValue root(document, "", display);
    if (!document.is_object()) root.fail("expected an object");
    const JsonValue parameters = root.require("parameters");
    if (!parameters.json().is_object()) parameters.fail("expected an object of parameter paths");
    for (const auto& [path, unused] : parameters.json().items()) {
        const JsonValue entry = parameters.child(path);
        std::string why;
        std::optional<Parameter> found = find_parameter(scene, path, &why);
        if (!found) (why.rfind("unknown parameter", 0) == 0 ? parameters : entry).fail(why);
        Parameter p = std::move(*found);
        if (!entry.json().is_object()) entry.fail("expected an object");
        std::vector<float> value;
        if (auto texture = entry.get("texture")) {
            if (p.kind != ParameterKind::material_albedo_texture) texture->fail("only texture parameters take a texture");
            const std::string file = texture->nonempty_string();
            const LinearImage image = load_image(params_json.parent_path() / file, file, *texture);
            p.texture_width = image.width;
            p.texture_height = image.height;
            p.size = static_cast<size_t>(image.width) * image.height * 3;
            for (const float4& t : image.texels) value.insert(value.end(), {t.x, t.y, t.z});
        } else {
            const JsonValue v = entry.require("value");
            const std::string shape = "expected " + std::to_string(p.size) + " numbers";
            if (p.size == 1 && v.json().is_number()) {
                value.push_back(v.number()); // a one-element value may be written as a plain number
            } else {
                if (!v.json().is_array() || v.array_size() != p.size) v.fail(shape);
                value.reserve(p.size);
                for (size_t i = 0; i < p.size; ++i) {
                    if (!v[i].json().is_number()) v.fail(shape);
                    value.push_back(v[i].number());
                }
            }
            if (p.kind == ParameterKind::mesh_rotation && value[0] == 0 && value[1] == 0 && value[2] == 0 && value[3] == 0)
                v.fail("expected a non-zero quaternion [w, x, y, z]");
        }
        set_parameter_value(scene, p, value);
    }
}

} // namespace adjoint::app
