// load_scene: a format-1 scene file into the plain structs of scene.h, every check done before returning.
#include "scene/loading.h"

#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/plugins.h>
#include <cmath>
#include <sstream>

namespace adjoint::app {

using namespace detail;

SceneError::SceneError(std::string file, std::string json_path, std::string reason)
    : adjoint::Error([&] {
          std::string s = file.empty() ? "" : file + ": ";
          if (!json_path.empty()) s += json_path + ": ";
          return s + reason;
      }()),
      file_(std::move(file)), json_path_(std::move(json_path)), reason_(std::move(reason)) {}

namespace {

template <typename T>
int find_by_name(const std::vector<T>& items, std::string_view name) {
    for (size_t i = 0; i < items.size(); ++i)
        if (items[i].name == name) return static_cast<int>(i);
    return -1;
}

std::string size_text(uint32_t width, uint32_t height) {
    return std::to_string(width) + "x" + std::to_string(height);
}

void read_materials(const JsonValue& value, const std::filesystem::path& base_dir, Scene& scene) {
    if (!value.json().is_object()) value.fail("expected an object of named materials");
    for (const auto& [name, unused] : value.json().items()) {
        if (!name.empty() && name[0] == '_') continue;
        const JsonValue entry = value.child(name);
        if (name.empty()) entry.fail("a material needs a non-empty name");
        if (name == "mtl" || name == "gltf")
            entry.fail("the name \"" + name + "\" is reserved (a mesh's \"material\": \"mtl\" reads its OBJ's MTL "
                       "file, \"gltf\" its glTF file's materials)");
        Material material = read_material(entry, name, base_dir, scene);
        scene.materials.push_back(std::move(material));
    }
}

void read_meshes(const JsonValue& value, const std::filesystem::path& base_dir, Scene& scene) {
    if (!value.json().is_array() || value.array_size() == 0) value.fail("expected a list of at least one mesh");
    // Meshes name materials of the `materials` object only (MTL materials are added as meshes load).
    const size_t declared_materials = scene.materials.size();
    for (size_t i = 0; i < value.array_size(); ++i) {
        const JsonValue entry = value[i];
        entry.expect_object({"name", "file", "material", "translation", "rotation", "scale", "vertex_colors"});
        Mesh mesh;
        const JsonValue name = entry.require("name");
        mesh.name = name.nonempty_string();
        if (scene.find_mesh(mesh.name) >= 0) name.fail("another mesh is already named " + mesh.name);
        mesh.file = entry.require("file").nonempty_string();
        const JsonValue material = entry.require("material");
        const std::string material_name = material.nonempty_string();
        int material_index = material_name == "gltf" ? gltf_materials : mtl_materials;
        if (material_name != "mtl" && material_name != "gltf") {
            for (size_t m = 0; m < declared_materials; ++m)
                if (scene.materials[m].name == material_name) material_index = static_cast<int>(m);
            if (material_index < 0) {
                std::string known;
                for (size_t m = 0; m < declared_materials; ++m) known += (known.empty() ? "" : ", ") + scene.materials[m].name;
                material.fail("no material named " + material_name + " (materials: " +
                              (known.empty() ? "none" : known) +
                              "; or \"mtl\" for the OBJ's MTL file, \"gltf\" for the glTF file's materials)");
            }
        }
        if (auto t = entry.get("translation")) mesh.transform.translation = t->vec3();
        if (auto r = entry.get("rotation")) mesh.transform.rotation = read_rotation(*r);
        if (auto s = entry.get("scale")) mesh.transform.scale = read_scale(*s);
        if (auto c = entry.get("vertex_colors")) {
            if (!c->json().is_boolean()) c->fail("expected true or false");
            mesh.vertex_colors = c->json().get<bool>();
        }
        load_mesh_geometry(entry, base_dir, material_index, mesh, scene);
        scene.meshes.push_back(std::move(mesh));
    }
}

// A plug-in's name: one of the registry's, in its order.
template <typename Model>
std::string choose_plugin(const JsonValue& value, std::span<const Model* const> models) {
    std::vector<std::string_view> names;
    for (const Model* m : models) names.push_back(m->name);
    return std::string(names[value.choice(names)]);
}

void read_lights(const JsonValue& value, const std::filesystem::path& base_dir, Scene& scene) {
    if (!value.json().is_array()) value.fail("expected a list of lights");
    for (size_t i = 0; i < value.array_size(); ++i) {
        const JsonValue entry = value[i];
        if (!entry.json().is_object()) entry.fail("expected an object");
        Light light;
        light.type = choose_plugin(entry.require("type"), light_models());
        const LightModel& model = light_model(light.type);
        std::vector<std::string_view> keys{"name", "type"};
        keys.insert(keys.end(), model.keys.begin(), model.keys.end());
        keys.insert(keys.end(), {"color", "intensity"});
        if (model.shadow_source) keys.push_back("shadows");
        else if (auto shadows = entry.get("shadows"))
            shadows->fail(std::string(light.type == "ambient" || light.type == "environment" ? "an " : "a ") +
                          light.type + " light casts no shadows (point and directional lights do)");
        entry.expect_object(keys);
        const JsonValue name = entry.require("name");
        light.name = name.nonempty_string();
        if (scene.find_light(light.name) >= 0) name.fail("another light is already named " + light.name);
        model.read(entry, base_dir, scene, light);
        if (auto color = entry.get("color")) light.color = color->color();
        if (auto intensity = entry.get("intensity")) light.intensity = intensity->number_at_least(0, "a number >= 0");
        if (auto shadows = entry.get("shadows")) {
            if (!shadows->json().is_boolean()) shadows->fail("expected true or false");
            light.shadows = shadows->json().get<bool>();
        }
        scene.lights.push_back(std::move(light));
    }
}

// pixels: the largest view's, which bounds faces_per_pixel (kSoftListRoom).
RenderSettings read_render(const JsonValue& value, size_t pixels) {
    value.expect_object({"visibility", "soft"});
    RenderSettings render;
    if (auto v = value.get("visibility")) render.visibility = static_cast<Visibility>(v->choice({"hard", "antialias", "soft"}));
    if (auto soft = value.get("soft")) {
        soft->expect_object({"sigma", "gamma", "faces_per_pixel"});
        if (auto s = soft->get("sigma")) render.soft_sigma = s->number_above(0, kSoftSigmaRange, 1.0f);
        if (auto g = soft->get("gamma")) render.soft_gamma = g->number_at_least(kSoftLeastGamma, kSoftGammaRange);
        if (auto k = soft->get("faces_per_pixel")) {
            const uint64_t most = std::min<uint64_t>(kSoftMaxFacesPerPixel, kSoftListRoom / std::max<size_t>(pixels, 1));
            const std::string what = "an integer in [1, " + std::to_string(most) + "]" +
                                     (most < kSoftMaxFacesPerPixel ? " (2^24 list entries over the view's " +
                                                                         std::to_string(pixels) + " pixels)"
                                                                   : std::string());
            if (most == 0) k->fail("the views are too large for faces_per_pixel (2^24 list entries in all)");
            render.soft_faces_per_pixel = static_cast<uint32_t>(k->integer(1, most, what.c_str()));
        }
    }
    return render;
}

// `{view}` in a target image path → the view's index.
std::string expand_view(std::string pattern, size_t view) {
    const std::string key = "{view}";
    for (size_t at = pattern.find(key); at != std::string::npos; at = pattern.find(key, at))
        pattern.replace(at, key.size(), std::to_string(view));
    return pattern;
}

// A target image as the loss sees it: composited over the background, at the views' size.
LinearImage as_target(LinearImage image, const Scene& scene) {
    composite_over(image, scene.background);
    if (image.width != scene.camera.width || image.height != scene.camera.height)
        image = resample_box(image, scene.camera.width, scene.camera.height);
    return image;
}

// "<file> is WxH, another aspect than the views' WxH" where the image resampled to the camera's size would not
// keep its aspect (to half a pixel): stretched, it would not be the picture the views render. "" where it would.
std::string other_aspect(const std::string& file, const LinearImage& image, const Camera& camera) {
    if (std::abs(double(image.height) * camera.width / image.width - camera.height) <= 0.5) return "";
    return file + " is " + size_text(image.width, image.height) + ", another aspect than the views' " +
           size_text(camera.width, camera.height);
}

void read_target(const JsonValue& value, const std::filesystem::path& base_dir, const Scene& scene,
                 Optimization& optimize) {
    const char* shapes = "expected \"scene\", \"views\" or {\"images\": [...]}";
    if (value.json().is_string()) {
        if (value.string() == "scene") return;
        if (value.string() != "views") value.fail(shapes);
        if (scene.view_images.empty())
            value.fail("the views come from no dataset ({\"nerf\": ...} or {\"colmap\": ...}), so they have no images");
        optimize.target_is_scene = false;
        for (const ViewImage& view : scene.view_images) {
            optimize.target_files.push_back(view.file);
            // The dataset's intrinsics are in pixels of the size it gives: an image of another size is not
            // the picture those intrinsics describe.
            LinearImage image;
            try {
                image = load_image(base_dir / view.file, view.file, value);
            } catch (const SceneError& e) {
                value.fail(view.source + ": " + e.reason());   // the frame or line that names the file
            }
            if (view.size.width > 0 && (image.width != view.size.width || image.height != view.size.height))
                value.fail(view.source + ": " + view.file + " is " + size_text(image.width, image.height) +
                           ", but the dataset gives its camera " + size_text(view.size.width, view.size.height));
            // Without a size the dataset's field of view is taken in square pixels of the views: an image of
            // another aspect (by over half a pixel) would be stretched to them, and would not be the picture
            // they render.
            const std::string other = other_aspect(view.file, image, scene.camera);
            if (view.size.width == 0 && !other.empty())
                value.fail(view.source + ": " + other +
                           ", and the dataset gives no image size (w, h) for its field of view: give w and h, or a "
                           "camera.resolution of the images' aspect");
            optimize.target_images.push_back(as_target(std::move(image), scene));
        }
        return;
    }
    if (!value.json().is_object()) value.fail(shapes);
    value.expect_object({"images"});
    const JsonValue images = value.require("images");
    if (!images.json().is_array() || images.array_size() == 0) images.fail("expected a list of image paths");
    const size_t views = scene.views.size();
    const size_t given = images.array_size();
    optimize.target_is_scene = false;
    for (size_t view = 0; view < views; ++view) {
        // One entry per view, or a single one with {view} that stands for all of them.
        const JsonValue entry = images[given == 1 ? 0 : view];
        const std::string pattern = entry.nonempty_string();
        if (given == 1 && views > 1 && pattern.find("{view}") == std::string::npos)
            images.fail("1 image for " + std::to_string(views) + " views (give one per view, or a path with {view})");
        if (given != 1 && given != views)
            images.fail(std::to_string(given) + " images for " + std::to_string(views) +
                        " views (give one per view, or a path with {view})");
        const std::string file = expand_view(pattern, view);
        optimize.target_files.push_back(file);
        LinearImage image = load_image(base_dir / file, file, entry);
        if (const std::string other = other_aspect(file, image, scene.camera); !other.empty())
            entry.fail(other + ": it would be stretched to them; crop it to their aspect, or give the views its "
                               "aspect");
        optimize.target_images.push_back(as_target(std::move(image), scene));
    }
}

// The optimizer's own keys (defaults where the file is silent); another optimizer's key is an error.
void read_optimizer_keys(const JsonValue& value, const OptimizerModel& model, Optimization& optimize) {
    uint32_t at = 0;
    for (const OptimizerKey& k : model.keys) {
        for (uint32_t i = 0; i < k.count; ++i) optimize.optimizer_settings[at + i] = k.defaults[i];
        if (auto v = value.get(std::string(k.name))) {
            const std::string shape = "expected " + std::string(k.expected);
            const bool list = k.count > 1;
            if (list && (!v->json().is_array() || v->array_size() != k.count)) v->fail(shape);
            for (uint32_t i = 0; i < k.count; ++i) {
                const JsonValue x = list ? (*v)[i] : *v;
                if (!x.json().is_number()) v->fail(shape);
                const float f = x.number();
                if (!((k.lo_open ? f > k.lo : f >= k.lo) && f < k.hi)) v->fail(shape);
                optimize.optimizer_settings[at + i] = f;
            }
        }
        at += k.count;
    }
    for (const OptimizerModel* other : optimizer_models()) {
        if (other == &model) continue;
        for (const OptimizerKey& k : other->keys) {
            bool own = false;
            for (const OptimizerKey& mine : model.keys) own = own || mine.name == k.name;
            if (auto v = value.get(std::string(k.name)); v && !own)
                v->fail(std::string(k.name) + (k.plural ? " apply" : " applies") + " to the " + std::string(other->name) +
                        " optimizer only");
        }
    }
}

// The size of the map a uniform sky becomes when its texture is free and the parameter names no resolution:
// the relight demo's, fine enough for a shiny object's reflections and cheap to prefilter.
constexpr Resolution kFreeSkyMap{64, 32};

// A uniform (`color`) environment whose `lights.<name>.texture` is free becomes a map of that colour (the
// parameter's resolution, else kFreeSkyMap) times a white light: it renders as before and has texels to fit.
void free_sky_maps(const JsonValue& optimize, Scene& scene) {
    const auto parameters = optimize.get("parameters");
    if (!parameters || !parameters->json().is_object()) return;   // read_optimize says what is wrong
    for (const auto& [path, unused] : parameters->json().items()) {
        if (!path.starts_with("lights.") || !path.ends_with(".texture")) continue;
        const int l = scene.find_light(path.substr(7, path.size() - 7 - 8));
        if (l < 0 || scene.lights[size_t(l)].type != "environment" || scene.lights[size_t(l)].texture >= 0) continue;
        const JsonValue entry = parameters->child(path);
        Resolution size = kFreeSkyMap;
        if (entry.json().is_object())
            if (auto r = entry.get("resolution")) size = r->resolution();
        Light& light = scene.lights[size_t(l)];
        LinearImage map;
        map.width = size.width;
        map.height = size.height;
        map.texels.assign(size_t(size.width) * size.height, float4(light.color.x, light.color.y, light.color.z, 1.0f));
        light.color = float3(1, 1, 1);
        light.texture = int32_t(scene.textures.size());
        scene.textures.push_back(std::move(map));
    }
}

Optimization read_optimize(const JsonValue& value, const std::filesystem::path& base_dir, const Scene& scene) {
    // The optimizers' keys follow "optimizer" (the order the unknown-key message lists them in).
    std::vector<std::string_view> keys{"target", "mask", "parameters", "loss", "optimizer"};
    for (const OptimizerModel* m : optimizer_models())
        for (const OptimizerKey& k : m->keys) keys.push_back(k.name);
    keys.insert(keys.end(), {"lr_decay", "iterations", "views_per_iteration", "seed", "regularizers"});
    value.expect_object(keys);
    Optimization optimize;
    if (auto target = value.get("target")) read_target(*target, base_dir, scene, optimize);
    optimize.parameters = read_parameters(value.require("parameters"), base_dir, scene);
    if (optimize.target_is_scene) check_truths_reachable(value.require("parameters"), scene, optimize.parameters);
    if (auto loss = value.get("loss")) optimize.loss = choose_plugin(*loss, loss_models());
    if (auto mask = value.get("mask")) {
        optimize.mask_alpha = mask->choice({"none", "alpha"}) == 1;
        // The silhouette loss compares alpha itself: masking it by the target's alpha would leave it nothing.
        if (optimize.mask_alpha && optimize.loss == "silhouette")
            mask->fail("the mask leaves pixels out of a colour loss; the silhouette loss compares alpha itself");
    }
    if (auto o = value.get("optimizer")) optimize.optimizer = choose_plugin(*o, optimizer_models());
    read_optimizer_keys(value, optimizer_model(optimize.optimizer), optimize);
    if (auto decay = value.get("lr_decay")) optimize.lr_decay = decay->number_above(0, "a number > 0");
    if (auto iterations = value.get("iterations"))
        optimize.iterations =
            static_cast<uint32_t>(iterations->integer(0, 1'000'000'000, "an integer in [0, 1000000000]"));
    if (auto per = value.get("views_per_iteration")) {
        const std::string what = "an integer in [1, " + std::to_string(scene.views.size()) + "] (the number of views)";
        optimize.views_per_iteration = static_cast<uint32_t>(per->integer(1, scene.views.size(), what.c_str()));
    }
    if (auto seed = value.get("seed")) optimize.seed = seed->integer(0, UINT64_MAX, "an integer >= 0");
    if (auto regularizers = value.get("regularizers")) {
        regularizers->expect_object({"laplacian", "edge_length"});
        if (auto l = regularizers->get("laplacian")) optimize.laplacian = l->number_at_least(0, "a number >= 0");
        if (auto e = regularizers->get("edge_length")) optimize.edge_length = e->number_at_least(0, "a number >= 0");
    }
    return optimize;
}

} // namespace

float Optimization::setting(std::string_view name, uint32_t index) const {
    uint32_t at = 0;
    for (const OptimizerKey& k : optimizer_model(optimizer).keys) {
        if (k.name == name && index < k.count) return optimizer_settings[at + index];
        at += k.count;
    }
    throw Error("the " + optimizer + " optimizer has no setting " + std::string(name) + "[" + std::to_string(index) + "]");
}

int Scene::find_material(std::string_view name) const { return find_by_name(materials, name); }
int Scene::find_mesh(std::string_view name) const { return find_by_name(meshes, name); }
int Scene::find_light(std::string_view name) const { return find_by_name(lights, name); }

Scene load_scene_from_string(std::string_view json_text, const std::filesystem::path& base_dir,
                             const std::string& display_name, const LoadOptions& options) {
    if (options.resolution) check_resolution(*options.resolution);
    const Json document = parse_json(json_text, display_name);
    const JsonValue root(document, "", display_name);
    root.expect_object({"format", "camera", "views", "background", "materials", "meshes", "lights", "render", "optimize"});
    Scene scene;
    scene.display_name = display_name;
    root.require("format").integer(1, 1, "1 (the scene format this program reads)");

    // Views read at the file's resolution (their intrinsics are in its pixels), then all scaled to the option's.
    const auto views = root.get("views");
    bool dataset = false;
    for (const ViewSource* source : view_sources()) dataset = dataset || (views && views->has(source->key));
    const JsonValue camera = root.require("camera");
    scene.camera = read_camera(camera, nullptr, dataset);
    if (views) read_views(*views, base_dir, scene);
    else scene.views = {scene.camera};
    // A dataset's main camera without a pose of its own is its first view (a free camera starts there).
    if (dataset && !camera.has("eye") && !camera.has("matrix")) {
        const Camera& first = scene.views.front();
        scene.camera.eye = first.eye;
        scene.camera.target = first.target;
        scene.camera.up = first.up;
        if (!camera.has("fov_y") && !camera.has("intrinsics")) {
            scene.camera.fov_y = first.fov_y;
            scene.camera.intrinsics = first.intrinsics;
        }
    }
    scene.file_resolution = {scene.camera.width, scene.camera.height};
    if (options.resolution) {
        set_resolution(scene.camera, *options.resolution);
        for (Camera& view : scene.views) set_resolution(view, *options.resolution);
    }
    const auto background = root.get("background");
    if (background && !background->json().is_string()) scene.background = background->color();
    if (auto materials = root.get("materials")) read_materials(*materials, base_dir, scene);
    read_meshes(root.require("meshes"), base_dir, scene);
    if (auto lights = root.get("lights")) read_lights(*lights, base_dir, scene);
    if (auto render = root.get("render")) {
        size_t pixels = size_t(scene.camera.width) * scene.camera.height;
        for (const Camera& view : scene.views) pixels = std::max<size_t>(pixels, size_t(view.width) * view.height);
        scene.render = read_render(*render, pixels);
    }
    if (background && background->json().is_string()) {
        if (background->string() != "environment")
            background->fail("expected [r, g, b] or \"environment\" (the scene's environment or sh light behind it)");
        for (size_t l = 0; l < scene.lights.size() && scene.background_light < 0; ++l)
            if (light_model(scene.lights[l].type).radiance) scene.background_light = int32_t(l);
        if (scene.background_light < 0) background->fail("\"environment\" needs an environment or sh light to show");
    }
    if (auto optimize = root.get("optimize")) {
        free_sky_maps(*optimize, scene);
        scene.optimize = read_optimize(*optimize, base_dir, scene);
        unshare_free_textures(scene, scene.optimize->parameters);
        // camera.intrinsics' init is in pixels at the file's camera.resolution, as the camera's own intrinsics
        // are: it scales with --resolution as they do, so that the run starts where the file says.
        for (Parameter& p : scene.optimize->parameters) p.init = value_in_run_units(scene, p.kind, std::move(p.init));
    }
    if (scene.optimize && scene.background_light >= 0) {
        // The renderer draws the environment behind the scene but does not differentiate it: refuse what
        // would need its gradient.
        const JsonValue optimize = root.require("optimize");
        if (!scene.optimize->target_is_scene)
            optimize.require("target").fail("with background \"environment\" the target is the scene's own "
                                            "render; target images take a background colour");
        for (const Parameter& p : scene.optimize->parameters) {
            const ParameterKindInfo& kind = kind_info(p.kind);
            if (kind.collection == ParameterCollection::camera ||
                (kind.collection == ParameterCollection::lights && int32_t(p.target) == scene.background_light))
                optimize.require("parameters").child(p.path).fail(
                    "the environment drawn behind the scene (background \"environment\") carries no gradient; "
                    "give background a colour to optimize " + p.path);
        }
    }
    return scene;
}

Scene load_scene(const std::filesystem::path& file, const LoadOptions& options) {
    const std::string display = file.string();
    std::string reason;
    const std::optional<std::string> text = try_read_file(file, display, reason);
    if (!text) throw SceneError("", "", reason);
    Scene scene = load_scene_from_string(*text, file.parent_path(), display, options);
    scene.source_file = file;
    return scene;
}

void override_resolution(Scene& scene, Resolution resolution) {
    check_resolution(resolution);
    if (scene.optimize && !scene.optimize->target_is_scene) {
        const LinearImage& image = scene.optimize->target_images.front();
        if (image.width != resolution.width || image.height != resolution.height)
            throw SceneError(scene.display_name, "--resolution",
                             size_text(resolution.width, resolution.height) + " differs from the target image " +
                                 image.source + " (" + size_text(image.width, image.height) + ")");
    }
    if (scene.optimize)   // inits in the run's units, as the loader left them, at the new resolution
        for (Parameter& p : scene.optimize->parameters) p.init = value_in_file_units(scene, p.kind, std::move(p.init));
    set_resolution(scene.camera, resolution);
    for (Camera& view : scene.views) set_resolution(view, resolution);
    if (scene.optimize)
        for (Parameter& p : scene.optimize->parameters) {
            p.init = value_in_run_units(scene, p.kind, std::move(p.init));
            if (p.kind == ParameterKind::camera_intrinsics) p.runs = intrinsics_ranges(scene.camera);
        }
}

} // namespace adjoint::app
