// Parameter paths: resolving `materials.<name>.albedo` and the like against a scene, reading their
// values from `optimize.parameters` and params.json, and moving values between scenes and flat floats,
// all through the kinds' descriptors (parameter_kinds.h).
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/params_file.h>
#include <adjoint/app/plugins.h>

#include "scene/loading.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace adjoint::app {

using namespace detail;

namespace {

// The size a parameter's lengths are measured against: a mesh's vertices (in its own coordinates) its own box,
// a world-space length (a translation, a light's position, the camera's) the box of every mesh in the world.
float length_scale(const Scene& scene, const Parameter& p) {
    BoundingBox box;
    if (p.kind == ParameterKind::mesh_vertices)
        box.add(scene.meshes[p.target].positions);
    else
        for (const Mesh& mesh : scene.meshes) {
            const float4x4 m = model_matrix(mesh.transform);
            box.add(mesh.positions, &m);
        }
    return box.radius();
}

std::optional<Parameter> refuse(std::string* why, std::string reason) {
    if (why) *why = std::move(reason);
    return std::nullopt;
}

// The index of a collection's entry by name, or -1.
// "unknown parameter <path>": quoted where it holds a space or a character that does not show (a trailing space
// read as a valid-looking name), with the names the collection has where the name is not one of them (a glTF's
// materials renamed <mesh>/<material>#2 for a second of one name).
std::string unknown_parameter(const Scene& scene, std::string_view path, ParameterCollection collection,
                              const std::string& name, bool name_missing) {
    const bool plain = std::all_of(path.begin(), path.end(), [](char c) { return c > ' ' && c < 127; });
    std::string text = "unknown parameter " + (plain ? std::string(path) : "\"" + std::string(path) + "\"");
    if (!name_missing) return text;
    std::vector<std::string> names;
    if (collection == ParameterCollection::materials)
        for (const Material& m : scene.materials) names.push_back(m.name);
    if (collection == ParameterCollection::lights)
        for (const Light& l : scene.lights) names.push_back(l.name);
    if (collection == ParameterCollection::meshes)
        for (const Mesh& m : scene.meshes) names.push_back(m.name);
    const char* kind = collection == ParameterCollection::materials ? "material"
                       : collection == ParameterCollection::lights  ? "light"
                                                                    : "mesh";
    text += std::string(" (no ") + kind + " is named \"" + name + "\"; the scene's: ";
    for (size_t i = 0; i < names.size() && i < 8; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > 8) text += ", ... (" + std::to_string(names.size()) + " in all)";
    return text + ")";
}

int find_target(const Scene& scene, ParameterCollection collection, const std::string& name) {
    switch (collection) {
    case ParameterCollection::materials: return scene.find_material(name);
    case ParameterCollection::lights: return scene.find_light(name);
    case ParameterCollection::meshes: return scene.find_mesh(name);
    case ParameterCollection::camera: return 0;
    }
    return -1;
}

// A material's property or texture by name: the kind and Parameter::property, offset, size and range. nullopt
// with the reason when the material's model has none so named.
std::optional<Parameter> material_parameter(const Scene& scene, uint32_t index, std::string_view property,
                                            std::string* why, const std::string& unknown) {
    const Material& m = scene.materials[index];
    const MaterialModel& model = material_model(m.model);
    Parameter p;
    p.target = index;
    for (uint32_t i = 0; i < model.properties.size(); p.offset += model.properties[i++].floats) {
        if (model.properties[i].name != property) continue;
        p.kind = ParameterKind::material_value;
        p.property = i;
        p.size = model.properties[i].floats;
        p.lo = model.properties[i].lo;
        p.hi = model.properties[i].hi;
        return p;
    }
    p.offset = 0;
    for (uint32_t i = 0; i < model.textures.size(); ++i) {
        if (model.textures[i].name != property) continue;
        p.kind = ParameterKind::material_texture;
        p.property = i;
        p.lo = kind_info(p.kind).lo;
        p.hi = kind_info(p.kind).hi;
        return p;
    }
    std::string names;
    for (const MaterialProperty& q : model.properties) names += (names.empty() ? "" : ", ") + std::string(q.name);
    for (const MaterialTexture& t : model.textures) names += ", " + std::string(t.name);
    for (const MaterialModel* other : material_models()) {
        bool has = false;
        for (const MaterialProperty& q : other->properties) has = has || q.name == property;
        for (const MaterialTexture& t : other->textures) has = has || t.name == property;
        if (has)
            return refuse(why, "material " + m.name + " is a " + m.model + " material; " + std::string(property) +
                                   " belongs to " + std::string(other->name) + " materials (" + m.model + " has " +
                                   names + ")");
    }
    return refuse(why, unknown);
}

} // namespace

bool is_geometry_parameter(ParameterKind kind) { return kind_info(kind).geometry; }

bool is_data_texture(const Scene& scene, const Parameter& p) {
    return p.kind == ParameterKind::material_texture &&
           !material_model(scene.materials[p.target].model).textures[p.property].srgb;
}

const char* parameter_property(ParameterKind kind) { return kind_info(kind).property; }

std::optional<Parameter> find_parameter(const Scene& scene, std::string_view path, std::string* why) {
    const std::string unknown = unknown_parameter(scene, path, ParameterCollection::camera, "", false);
    // collection.name.property; names may hold dots (the property never does).
    const size_t first = path.find('.'), last = path.rfind('.');
    if (first == std::string_view::npos) return refuse(why, unknown);
    const std::string_view collection = path.substr(0, first), property = path.substr(last + 1);
    const bool camera = collection == "camera";
    if (camera != (first == last)) return refuse(why, unknown);
    const std::string name(camera ? std::string_view() : path.substr(first + 1, last - first - 1));
    Parameter p;
    if (collection == collection_name(ParameterCollection::materials)) {
        const int index = scene.find_material(name);
        if (index < 0) return refuse(why, unknown_parameter(scene, path, ParameterCollection::materials, name, true));
        std::optional<Parameter> found = material_parameter(scene, uint32_t(index), property, why, unknown);
        if (!found) return found;
        p = std::move(*found);
    } else {
        const ParameterKindInfo* found = find_kind(collection, property);
        if (!found) return refuse(why, unknown);
        const int index = find_target(scene, found->collection, name);
        if (index < 0) return refuse(why, unknown_parameter(scene, path, found->collection, name, true));
        p.kind = found->kind;
        p.target = static_cast<uint32_t>(index);
        p.lo = found->lo;
        p.hi = found->hi;
    }
    p.path = std::string(path);
    if (p.kind == ParameterKind::camera_intrinsics) p.runs = intrinsics_ranges(scene.camera);
    const ParameterKindInfo* info = &kind_info(p.kind);
    if (std::string reason = info->refusal(scene, p.target, p.property); !reason.empty()) return refuse(why, std::move(reason));
    const uint32_t element = info->element(scene, p.target, p.property);
    if (p.kind != ParameterKind::material_value) p.size = info->size(scene, element);
    if (info->storage == ParameterStorage::texture) {
        p.texture_width = scene.textures[element].width;
        p.texture_height = scene.textures[element].height;
    }
    return p;
}

std::vector<float> parameter_value(const Scene& scene, const Parameter& p) {
    const ParameterKindInfo& info = kind_info(p.kind);
    const uint32_t element = info.element(scene, p.target, p.property);
    std::vector<float> out(info.size(scene, element));
    info.read(scene, element, out.data());
    if (info.storage == ParameterStorage::texture) return out;   // at the scene texture's own resolution
    return {out.begin() + p.offset, out.begin() + p.offset + std::ptrdiff_t(p.size)};
}

std::vector<float> parameter_value_at_its_size(const Scene& scene, const Parameter& p) {
    std::vector<float> v = parameter_value(scene, p);
    if (kind_info(p.kind).storage != ParameterStorage::texture) return v;
    // A texture parameter's element is its texture in scene.textures (parameter_value read it as RGB). Its size,
    // not its texel count: 128x128 and 256x64 hold as many.
    const LinearImage& texture = scene.textures[kind_info(p.kind).element(scene, p.target, p.property)];
    if (texture.width == p.texture_width && texture.height == p.texture_height) return v;
    LinearImage image;
    image.width = texture.width;
    image.height = texture.height;
    image.texels.resize(size_t(image.width) * image.height);
    for (size_t i = 0; i < image.texels.size(); ++i)
        image.texels[i] = float4(v[3 * i], v[3 * i + 1], v[3 * i + 2], 1.0f);
    // An environment map's rows span latitudes from pole to pole; a material's texture repeats both ways.
    const LinearImage sized = detail::resample_texture(image, p.texture_width, p.texture_height,
                                                       p.kind == ParameterKind::light_texture);
    std::vector<float> out(p.size);
    for (size_t i = 0; i < sized.texels.size(); ++i)
        for (size_t c = 0; c < 3; ++c) out[3 * i + c] = sized.texels[i][c];
    return out;
}

void set_parameter_value(Scene& scene, const Parameter& p, std::span<const float> v) {
    if (v.size() != p.size)
        fail("set_parameter_value: ", p.path, " takes ", p.size, " floats, got ", v.size());
    kind_info(p.kind).write(scene, p, v);
}

// A value's kind's validity and the format's range (below).
std::string value_range_problem(const Parameter& p, std::span<const float> value);

namespace detail {

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
        const ParameterKindInfo& info = kind_info(p.kind);
        entry.expect_object({"init", "perturb", "lr", "resolution"});
        const auto init = entry.get("init");
        const auto perturb = entry.get("perturb");
        const auto resolution = entry.get("resolution");
        if (init && perturb) entry.fail("give init or perturb, not both");
        if (!init && !perturb) entry.fail("needs init (a start value) or perturb (a random offset from the scene's value)");
        if (resolution) {
            if (info.storage != ParameterStorage::texture)
                resolution->fail("only texture parameters take a resolution");
            const Resolution r = resolution->resolution();
            if (perturb && (r.width != p.texture_width || r.height != p.texture_height))
                resolution->fail("perturb starts from the scene's texture (" + std::to_string(p.texture_width) + "x" +
                                 std::to_string(p.texture_height) + "); use init for another resolution");
            // Named here, where the size is given (the init's check named .init for an RGB fill).
            if (p.kind == ParameterKind::light_texture && r.width != 2 * r.height)
                resolution->fail("an environment map is equirectangular: its width must be twice its height, not " +
                                 std::to_string(r.width) + "x" + std::to_string(r.height));
            p.texture_width = r.width;
            p.texture_height = r.height;
            p.size = static_cast<size_t>(r.width) * r.height * 3;
        }
        if (init) {
            p.init = info.read_init(*init, InitContext{scene, base_dir, resolution.has_value()}, p);
            // Out of the parameter's range (an albedo of 2) it rendered the first iteration so, then the step
            // clamped it: refused, as params.json's values are. A camera that cannot look is judged once every
            // init is in (check_meshes_in_view): an eye init may come with a target init.
            // In the run's units, as the ranges are (intrinsics at --resolution; the loader converts p.init after).
            if (const std::string why = value_range_problem(p, value_in_run_units(scene, p.kind, p.init));
                !why.empty())
                init->fail(why);
            // The pbr shading reads roughness as at least kMinRoughness, where its gradient is 0: a run that
            // started below it never moved (0 after 60 iterations, for a truth of 0.4).
            if (p.kind == ParameterKind::material_value && p.size == 1 && p.init[0] < kMinRoughness &&
                material_model(scene.materials[p.target].model).properties[p.property].name == "roughness")
                init->fail("a roughness below " + detail::number_text(kMinRoughness) + " renders as " +
                           detail::number_text(kMinRoughness) + ", where its gradient is 0: a run started there "
                           "would never move it; start at " + detail::number_text(kMinRoughness) + " or above");
        }
        if (perturb) {
            p.perturb = perturb->number_at_least(0, "a number >= 0");
            // A turn by more than half a turn is one by less the other way: 360 started at the truth.
            if (info.perturbation == Perturbation::rotation && *p.perturb > 180)
                perturb->fail("a rotation's perturb is an angle in degrees up to 180 (a larger one is a smaller one "
                              "the other way round)");
        }
        if (auto lr = entry.get("lr"))
            p.lr = lr->number_above(0, "a number > 0");
        else if (std::string_view(info.units) == "scene units")
            // Adam steps about lr in the value's own units, so a length's default follows the size it is measured
            // against: a glTF asset in centimetres moves as fast, relative to itself, as a unit-sized one.
            p.lr *= std::max(1.0f, length_scale(scene, p));
        out.push_back(std::move(p));
    }
    if (out.empty()) parameters.fail("expected at least one parameter");
    return out;
}

uint32_t own_texture(Scene& scene, uint32_t material, uint32_t texture) {
    int32_t& own = scene.materials[material].textures[texture];
    size_t uses = 0;
    for (const Material& m : scene.materials) uses += size_t(std::count(m.textures.begin(), m.textures.end(), own));
    if (own >= 0 && uses > 1) {
        scene.textures.push_back(scene.textures[size_t(own)]);
        own = int32_t(scene.textures.size() - 1);
    }
    return uint32_t(own);
}

void unshare_free_textures(Scene& scene, const std::vector<Parameter>& ps) {
    for (const Parameter& p : ps)
        if (p.kind == ParameterKind::material_texture) own_texture(scene, p.target, p.property);
}

void check_truths_reachable(const JsonValue& parameters, const Scene& scene, const std::vector<Parameter>& ps) {
    for (const Parameter& p : ps)
        if (const std::string why = parameter_value_problem(scene, p, parameter_value(scene, p)); !why.empty())
            parameters.child(p.path).fail("the scene's value, the run's truth, lies outside the range the optimizer "
                                          "keeps it in (" + why + "): no step could reach it");
}

} // namespace detail

void apply_params_file(Scene& scene, const std::filesystem::path& params_json) {
    const std::string file = params_json.string();
    std::vector<ParamRecord> records;
    try {
        records = read_params_json(params_json);
    } catch (const SceneError&) {
        throw;
    } catch (const Error& e) {
        throw SceneError("", "", e.what()); // already `<file>: <json path>: <what>`
    }
    for (const ParamRecord& r : records) {
        const std::string at = child_path("parameters", r.path);
        std::string why;
        std::optional<Parameter> found = find_parameter(scene, r.path, &why);
        if (!found) throw SceneError(file, why.rfind("unknown parameter", 0) == 0 ? "parameters" : at, why);
        Parameter p = std::move(*found);
        const ParameterKindInfo& info = kind_info(p.kind);
        std::vector<float> value = r.value;
        if (r.texture) {
            if (info.storage != ParameterStorage::texture)
                throw SceneError(file, at + ".texture", "only texture parameters take a texture");
            const Image& image = *r.texture;
            if (image.width > int(max_resolution) || image.height > int(max_resolution))
                throw SceneError(file, at + ".texture", "larger than " + std::to_string(max_resolution) + " per side");
            p.texture_width = uint32_t(image.width);
            p.texture_height = uint32_t(image.height);
            p.size = size_t(image.width) * image.height * 3;
            // A PNG of stored values (a data texture's: write_params_json), decoded as sRGB: encoded back.
            const bool data = r.data;
            for (size_t t = 0; t < size_t(image.width) * image.height; ++t)
                for (int c = 0; c < 3; ++c) {
                    const float x = image.pixels[t * size_t(image.channels) + size_t(c)];
                    value.push_back(data ? linear_to_srgb(x) : x);
                }
        } else {
            if (value.size() != p.size) throw SceneError(file, at + ".value", "expected " + std::to_string(p.size) + " numbers");
            value = value_in_run_units(scene, p.kind, std::move(value));
            if (const std::string why = parameter_value_problem(scene, p, value); !why.empty())
                throw SceneError(file, at + ".value", why);
        }
        set_parameter_value(scene, p, value);
    }
}

// The value's own problems: its kind's validity, and the format's range (the optimizer keeps values in it): a
// negative intensity, a field of view of 0, a NaN.
std::string value_range_problem(const Parameter& p, std::span<const float> value) {
    const ParameterKindInfo& info = kind_info(p.kind);
    if (const char* invalid = info.invalid ? info.invalid(value) : nullptr) return invalid;
    for (float x : value)
        if (!std::isfinite(x)) return "expected finite numbers, got " + detail::number_text(x);
    size_t i = 0;
    for (const Parameter::Run& run : p.value_ranges()) {
        const std::string what = *run.what ? std::string(run.what) : "numbers";
        for (size_t end = std::min(value.size(), i + run.count); i < end; ++i)
            if (!(value[i] >= run.lo && value[i] <= run.hi))
                return std::isinf(run.hi) ? "expected " + what + " >= " + detail::number_text(run.lo)
                                          : "expected " + what + " in [" + detail::number_text(run.lo) + ", " +
                                                detail::number_text(run.hi) + "]";
    }
    return {};
}

std::string parameter_value_problem(const Scene& scene, const Parameter& p, std::span<const float> value) {
    if (std::string why = value_range_problem(p, value); !why.empty()) return why;
    if (kind_info(p.kind).collection == ParameterCollection::camera) {
        Scene cameras;   // the cameras alone, as the value would leave them: an eye at its target shows nothing
        cameras.camera = scene.camera;
        cameras.views = scene.views;
        set_parameter_value(cameras, p, value);
        for (const Camera& view : cameras.views)
            if (std::string why = camera_problem(view); !why.empty()) return why;
    }
    return {};
}

} // namespace adjoint::app
