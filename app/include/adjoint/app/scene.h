// The scene: plain structs that a scene file (format 1) loads into, the loader, and parameter paths.
//
// load_scene() reads the JSON, every OBJ/MTL file and texture, and the target images, and checks all of it
// before anything touches a device; a problem throws SceneError whose message is
// `<file>: <json path>: <what>`. The structs are plain data laid out for upload: float3/uint3 are the
// engine's std430 host types (16 bytes), arrays are per-vertex or per-triangle, and names only matter to
// parameter paths.
//
// Decisions the contract leaves open (scene-format.md):
// - Unknown keys and repeated keys are errors; keys starting with `_` are comments, anywhere.
// - Required: `format` (1), `camera.eye`, `camera.target` (or `camera.matrix`; neither when the views are a
//   dataset's), `camera.resolution`, `meshes` (at least one),
//   `meshes[i].name`, `.file`, `.material`, `lights[i].name`, `.type` (`lights` itself is optional), and
//   `optimize.parameters` (at least one) when there is an `optimize`.
// - Materials: `model` names a material-model plug-in (plugins.h), phong by default; its keys are the model's
//   properties and textures (phong: albedo or albedo_texture, specular, shininess; pbr: base_color or
//   base_color_texture, metallic, roughness, metallic_roughness_texture, normal_texture, emissive).
// - Meshes: `.obj` (with its MTL for "material": "mtl") or `.ply` (ASCII or binary, either endianness; x y z,
//   nx ny nz, red green blue (8-bit: sRGB-decoded; float: linear), u v or s t; faces as fans; other elements
//   read past). A PLY vertex is one OBJ position for the vertex parameters. Or glTF 2.0 (`.gltf`, `.glb`; see
//   scene-format.md): vertices with the same position and colour are one OBJ position; missing normals are
//   computed as for OBJ; "material": "gltf" adds `<mesh>/<name or index>` pbr materials (`<name>#<index>` for a
//   name several share; textures with their factors multiplied in; `<mesh>/default`, metallic and rough as
//   glTF's default, for primitives without one).
// - Lights: point, directional, ambient and sh (`coefficients`: 4, 9 or 16 [r, g, b], Sloan's basis and
//   order); a light's type is a light-type plug-in (plugins.h).
// - Defaults: camera up [0,1,0], fov_y 40, near 0.05, far 100; material specular 0, shininess 32; light
//   color [1,1,1], intensity 1; background 0; visibility "hard"; soft sigma = gamma = 1e-4; parameter lr
//   0.01; loss l2; optimizer adam (betas [0.9, 0.999], eps 1e-8; sgd: momentum 0.9); lr_decay 1;
//   iterations 100; views_per_iteration 1; seed 0; regularizers 0. A mesh names a material of `materials`,
//   "mtl" or "gltf" (no default).
// - Names: materials, meshes and lights each have unique, non-empty names. A mesh with
//   `"material": "mtl"` adds the MTL materials its faces use as `<mesh name>/<MTL name>` (for example
//   `floor/tiles`, addressed as `materials.floor/tiles.albedo`); a clash with another name is an error.
// - Cameras: `intrinsics` (fx, fy, cx, cy in pixels at camera.resolution) or `fov_y`, not both; `matrix` (4 rows,
//   camera-to-world, OpenGL) or eye/target/up, not both. A matrix's rotation must be orthonormal within 1e-3
//   (a uniform scale is allowed) and right-handed; it becomes eye = translation, target = eye − Z, up = Y.
//   `camera.fov_y` is no parameter of a camera with intrinsics.
// - Views: a list entry is a camera without `resolution`; missing keys take the main camera's values
//   (only `eye` or `matrix` is required; a view's fov_y replaces the main camera's intrinsics).
//   Datasets (view sources, loading.h): {"nerf": file} and {"colmap": folder, "images": folder}; their own
//   keys that Adjoint does not use are ignored. With a dataset the main camera's eye/target may be left out
//   (it is then the first view). COLMAP: cameras.txt/images.txt when cameras.txt exists, else the .bin pair.
//   A --resolution option scales the intrinsics of every view. With "target": "views", an image whose size
//   differs from the one its dataset gives (a COLMAP camera's, a NeRF file's w × h) is an error. Orbit: view i has azimuth a0 + 360°·i/N around `camera.up` through
//   `target` (a0 is the camera's own azimuth) at the camera's distance, and elevation
//   lo + (hi − lo)·i/(N − 1) (the midpoint when N = 1); `elevation` defaults to the camera's own.
// - Textures and target images: 8- or 16-bit PNG/JPEG, RGB(A) decoded from sRGB to linear (alpha stays
//   linear), rows top first. Texture coordinates are flipped on load to (u, 1 − v), so (0, 0) is the first
//   texel in memory. An MTL material's `map_Kd` replaces its `Kd`; one with neither is an error.
// - Target images: `images` is a list with one entry per view, or a single entry containing `{view}`
//   that expands to every view; or "views": each dataset view's image. Composited over the background (RGB =
//   rgb·a + background·(1 − a), alpha kept), then box-filtered to the views' resolution when another size.
//   `mask`: "none" (default) or "alpha" (not with the silhouette loss).
// - Parameters: `camera.*` needs the camera to be the only view; `meshes.<m>.vertex_colors` needs the
//   mesh's `"vertex_colors": true`. A rotation is a unit quaternion [w, x, y, z] (init takes
//   `{"axis", "angle"}` or `{"quaternion"}` like a mesh's `rotation`); vertices and vertex colours are
//   per OBJ `v` line (`init`: a list of [x, y, z]). A texture's `init` is an RGB fill or a PNG file;
//   its `resolution` defaults to that PNG's, else to the material texture's (perturb keeps the latter).
//   Exactly one of `init` and `perturb`; `perturb` >= 0; `lr` > 0. A rotation's `perturb` turns it by that
//   many degrees about a seeded random axis; a rotation's error is the geodesic angle (radians), and
//   params.json gives its value as the unit quaternion.
// - Losses: `l2`, `l1` (RGB) and `silhouette` (L2 on the alpha channel, which is coverage: 1 inside, 0 on
//   the background, fractional on antialiased edges). Regularizers (meshes whose vertices are free):
//   `laplacian` w: w times the mean over OBJ positions of |p - mean of its edge neighbours|^2;
//   `edge_length` w: w times the mean over edges of |a - b|^2. Both are added to the reported loss.
// - params.json (written by adjoint-optimize, read by read_params_json in params_file.h): {"parameters":
//   {"<path>": {"value": [floats]} or {"texture": "<png beside params.json, sRGB>"}}} (a one-element value
//   may be a plain number); apply_params_file checks each against its kind's shape and leaves true_value,
//   true_texture and error aside. Other top-level keys are ignored.
#pragma once
#include <adjoint/core/error.h>
#include <adjoint/dsl/host_types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace adjoint::app {

// A scene that cannot be used. what() is `<file>: <json path>: <what>`; the programs print
// `adjoint: error: ` + what() and exit with code 2. An empty file or path is left out of what().
class SceneError : public adjoint::Error {
public:
    SceneError(std::string file, std::string json_path, std::string reason);
    const std::string& file() const { return file_; }
    const std::string& json_path() const { return json_path_; }
    const std::string& reason() const { return reason_; }

private:
    std::string file_, json_path_, reason_;
};

inline constexpr uint32_t max_resolution = 8192; // per side, for views, textures and target images

struct Resolution {
    uint32_t width = 0, height = 0;
    friend bool operator==(const Resolution&, const Resolution&) = default;
};

// A linear float RGBA image, rows top first: texel (x, y) is texels[y * width + x].
struct LinearImage {
    uint32_t width = 0, height = 0;
    std::vector<float4> texels;
    std::string source; // the file as the scene names it, relative to the scene; empty when made in memory
};

// ---- camera and views ---------------------------------------------------------------------------------
// A pinhole's intrinsics in pixels at the camera's resolution: focal lengths and principal point, x right
// and y down from the image's top-left corner, pixel centres at +0.5 (so a centred principal point is
// (width / 2, height / 2)), as COLMAP and OpenCV give them.
struct Intrinsics {
    float fx = 0, fy = 0, cx = 0, cy = 0;
    friend bool operator==(const Intrinsics&, const Intrinsics&) = default;
};

struct Camera {
    float3 eye{0, 0, 1};
    float3 target{0, 0, 0};
    float3 up{0, 1, 0};
    float fov_y = 40;         // vertical field of view, degrees (with intrinsics: the one fy gives)
    uint32_t width = 0, height = 0;
    float near = 0.05f, far = 100.0f;
    // When set, the projection is these intrinsics' (fov_y is kept equal to the field of view fy gives, for
    // code that only wants an angle); otherwise a centred principal point and square pixels of fov_y.
    std::optional<Intrinsics> intrinsics;
};

// The camera's resolution becomes `resolution`; intrinsics, being in pixels, scale with it.
void set_resolution(Camera& camera, Resolution resolution);
// The vertical field of view (degrees) of a focal length fy at height pixels.
float fov_y_of(float fy, uint32_t height);

// World → camera: right-handed look-at, the camera looks down −z with +y up (gluLookAt).
float4x4 view_matrix(const Camera& camera);
// Camera → clip, OpenGL convention (gluPerspective): NDC x right, y up, z in [−1, 1] from near to far,
// aspect width / height. NDC y = +1 is the image's top row (row 0). With intrinsics, a point at camera
// coordinates (x, y, z) (z < 0 in front) lands on pixel (cx + fx·x/−z, cy − fy·y/−z) (y down).
float4x4 projection_matrix(const Camera& camera);
float4x4 view_projection_matrix(const Camera& camera); // projection · view
// The narrowest field of view a camera may have across either side of its image. Narrower, the projection's
// scale overflows the rasterizer's edge products: fov_y 1e-30 rendered black.
constexpr double kNarrowestFovDegrees = 1e-3;
// Why focal lengths fx, fy (pixels) cannot image a width x height view: not finite and > 0, or a field of view
// narrower than kNarrowestFovDegrees across the width (fx) or the height (fy) (at most longest_focal; at least
// kShortestFocal), in a message that begins with the
// key at fault ("fx is 1e+30 pixels, above ..."); "" when they can. Every reader of
// focal lengths (intrinsics, NeRF, COLMAP) and every value set later (camera_problem) takes this test.
std::string focal_problem(double fx, double fy, uint32_t width, uint32_t height);
// The shortest focal length focal_problem accepts, pixels: a field of view within a hair of 180 degrees.
constexpr float kShortestFocal = 1e-3f;
// The longest focal length focal_problem accepts across `side` pixels: the largest float at most the limit, so
// that a value kept in [kShortestFocal, longest_focal] as a float always passes.
float longest_focal(uint32_t side);
// Why the camera cannot look (the loader's tests on eye, target, up and intrinsics, for values set after loading:
// start values, params.json, scene.parameters): "eye and target are the same point", "up is zero or parallel to
// the viewing direction", focal_problem's; "" when it can.
std::string camera_problem(const Camera& camera);
struct Mesh;
// Why `mesh` cannot show in `view`, judged from its world-space bounding box: "" when part of the box lies
// inside the view's frustum (the mesh may show), else where all of it lies: "beyond camera.far (100): its
// nearest corner is 481.9 along the view (raise camera.far)", "nearer than camera.near (0.05; lower it)",
// "behind the camera" or "outside the field of view".
std::string out_of_view(const Mesh& mesh, const Camera& view);
// How many of `mesh`'s triangles reach from behind the camera's plane to beyond its near plane (a floor that runs
// under the camera): every visibility draws their part beyond the near plane (the tests count them).
size_t triangles_across_the_eye(const Mesh& mesh, const Camera& view);

// ---- materials ----------------------------------------------------------------------------------------
// A material of a model plug-in (adjoint/app/plugins.h: phong, pbr): its values are the model's properties
// concatenated in the model's order (defaults filled in), its textures one entry per texture of the model.
struct Material {
    std::string name;             // parameter paths address it as materials.<name>.*
    std::string model = "phong";  // a material-model plug-in
    std::vector<float> values;
    std::vector<int32_t> textures; // index into Scene::textures, or −1

    // A property's floats (3 for a colour, 1 for a number); adjoint::Error when the model has none so named.
    std::span<const float> value(std::string_view property) const;
    std::span<float> value(std::string_view property);
    float3 color(std::string_view property) const;   // a 3-float property
    // The Scene::textures index of a texture of the model, or −1 (adjoint::Error for a name the model lacks).
    int32_t texture(std::string_view name) const;
    int32_t& texture(std::string_view name);
    bool has_textures() const;
};

// A material of the model with every property at its default and no textures.
Material make_material(std::string name, std::string_view model = "phong");

// ---- meshes -------------------------------------------------------------------------------------------
struct Quaternion {
    float w = 1, x = 0, y = 0, z = 0; // unit length
    friend bool operator==(const Quaternion&, const Quaternion&) = default;
};

// Placement of a mesh: model = translation · rotation · scale.
struct Transform {
    float3 translation{};
    Quaternion rotation{};
    float3 scale{1, 1, 1};
};

float3x3 rotation_matrix(const Quaternion& q);
float4x4 model_matrix(const Transform& transform);
// Inverse transpose of the model matrix's upper 3x3 (rotation · scale⁻¹), for normals.
float3x3 normal_matrix(const Transform& transform);
// A unit quaternion from an axis (any length > 0) and an angle in degrees.
Quaternion quaternion_from_axis_angle(float3 axis, float degrees);

// One OBJ file, triangulated, with (position, normal, texcoord) index triples merged into unified vertices.
struct Mesh {
    std::string name;      // parameter paths address it as meshes.<name>.*
    std::string file;      // as the scene names it, relative to the scene's folder
    Transform transform;
    bool vertex_colors = false; // multiply the albedo by `colors`

    // Per unified vertex, object space.
    std::vector<float3> positions;
    std::vector<float3> normals;       // unit; from the OBJ, or computed (see normals_computed)
    std::vector<float2> texcoords;     // (u, 1 − v); zeros when the OBJ has no `vt`
    std::vector<float3> colors;        // linear RGB from `v x y z r g b`, white when the OBJ has none
    std::vector<uint32_t> position_ids; // the OBJ position (`v` line, 0-based) each vertex came from

    // Per triangle.
    std::vector<uint3> triangles;            // counter-clockwise vertex indices, as in the OBJ
    std::vector<uint32_t> triangle_materials; // index into Scene::materials

    // Per OBJ position (`v` line): what the `vertices` and `vertex_colors` parameters hold, so that
    // vertices split at normal or texture seams move together.
    std::vector<float3> obj_positions;
    std::vector<float3> obj_colors;

    bool has_texcoords = false;
    bool has_colors = false;       // the OBJ gives a colour on every `v` line
    bool normals_computed = false; // some face lacked `vn`: area-weighted normals per OBJ position
};

// After obj_positions / obj_colors change: copies them into the unified vertices and, when the
// normals were computed, recomputes them.
void update_from_obj_positions(Mesh& mesh);

// ---- lights -------------------------------------------------------------------------------------------
struct Light {
    std::string name;      // parameter paths address it as lights.<name>.*
    std::string type = "point"; // a light-type plug-in (adjoint/app/plugins.h): point, directional, ambient, sh,
                                // environment
    float3 position{};     // point lights
    float3 direction{};    // directional lights: the unit direction the light travels
    std::vector<float3> coefficients; // sh lights: 4, 9 or 16 RGB spherical-harmonics coefficients
    float3 color{1, 1, 1}; // linear RGB
    float intensity = 1;   // point lights fall off with the inverse square of the distance
    // Environment lights: the equirectangular map of linear radiance (a Scene::textures entry, −1 for a
    // uniform sky of `color`), the file it came from, and its turn about +Y in degrees.
    int32_t texture = -1;
    std::string file;
    float rotation = 0;
    bool shadows = false;  // point and directional lights: points it cannot see get nothing from it
};

// ---- rendering ----------------------------------------------------------------------------------------
enum class Visibility : uint32_t { hard = 0, antialias = 1, soft = 2 };

struct RenderSettings {
    Visibility visibility = Visibility::hard;
    float soft_sigma = 1e-4f; // sigmoid coverage sharpness (soft only)
    // Softmax depth blending temperature (soft only). 0.1, not SoftRas's 1e-4: at 1e-4 the object outweighs the
    // background by ~e^9700 at any coverage, so a colour loss gets no silhouette gradient (a pose ends ~90° off).
    float soft_gamma = 0.1f;
    // The triangles a pixel blends (soft only): 0, every triangle within reach (SoftRas, exact); K, the K that
    // weigh most in its blend (PyTorch3D's faces_per_pixel, which keeps the K nearest): bounded work a pixel,
    // but the image jumps where a triangle enters or leaves the K.
    uint32_t soft_faces_per_pixel = 0;
};
// Each pixel's soft candidate list has room for at most this many entries over the view (64 MiB; lavapipe caps a
// storage buffer at 128 MiB): faces_per_pixel x width x height must fit. kSoftMaxFacesPerPixel at any resolution.
inline constexpr uint32_t kSoftListRoom = 1u << 24, kSoftMaxFacesPerPixel = 256;
// Soft gamma's least and its range and sigma's (their refusals: "expected " and these). Below 1e-6 float's rounding
// of the blend's exponents z / gamma (z in [0, 1]) changes its weights by over 6% (at 1e-38 they overflow: a NaN
// picture); past 1 sigma's reach spans the image (every triangle covers every pixel alike: 1e30 rendered one colour).
inline constexpr float kSoftLeastGamma = 1e-6f;
inline constexpr auto kSoftGammaRange = "a number >= 1e-6 (float's exponents z / gamma lose their precision below)";
inline constexpr auto kSoftSigmaRange = "a number in (0, 1] (past 1 every triangle reaches every pixel of the image)";

// ---- optimization -------------------------------------------------------------------------------------
// Each kind's path, shape, range, scene access, device slot, error and storage: its descriptor in
// parameter_kinds.h (a new kind is a value here and one entry there).
enum class ParameterKind : uint32_t {
    material_value,          // a property of the material's model: 3 (a colour) or 1
    material_texture,        // a texture of the material's model: texture_width × texture_height × 3, rows top first
    light_position,          // 3 (point lights)
    light_direction,         // 3 (directional lights)
    light_coefficients,      // 3 × 4, 9 or 16 (sh lights)
    light_rotation,          // 1, degrees (environment lights)
    light_texture,           // the environment map's texels: texture_width × texture_height × 3
    light_color,             // 3
    light_intensity,         // 1
    mesh_translation,        // 3
    mesh_rotation,           // 4: unit quaternion [w, x, y, z]
    mesh_scale,              // 3
    mesh_vertices,           // 3 × OBJ positions
    mesh_vertex_colors,      // 3 × OBJ positions
    camera_eye,              // 3
    camera_target,           // 3
    camera_fov_y,            // 1, degrees
    camera_intrinsics,       // 4: fx, fy, cx, cy in pixels (cameras with intrinsics)
};

// Parameters that move geometry (mesh placement and vertices, the camera).
bool is_geometry_parameter(ParameterKind kind);
// The last segment of a path: "albedo", "position", "fov_y", ...
const char* parameter_property(ParameterKind kind);

// A free value of the scene, addressed by path.
struct Parameter {
    std::string path;  // "lights.key.position"
    ParameterKind kind = ParameterKind::material_value;
    uint32_t target = 0;   // index into Scene::materials, ::lights or ::meshes (0 for the camera)
    uint32_t property = 0; // material values and textures: the index in the model's properties or textures
    uint32_t offset = 0;   // the value's first float in its element's slot (a material property's place)
    size_t size = 0;       // number of floats in the value
    float lo = 0, hi = 0;  // the range the optimizer keeps each float inside, unless `runs` gives ranges
    // Runs of the value's floats with ranges of their own, in order, covering it: the camera's intrinsics keep fx
    // and fy to a focal length focal_problem accepts and leave the principal point free. Empty: [lo, hi] for all.
    struct Run {
        const char* what;   // "fx and fy", as a refusal names them
        uint32_t count;
        float lo, hi;
    };
    std::vector<Run> runs;
    // The runs, or one of all the floats in [lo, hi].
    std::vector<Run> value_ranges() const {
        return runs.empty() ? std::vector<Run>{{"", uint32_t(size), lo, hi}} : runs;
    }
    uint32_t texture_width = 0, texture_height = 0; // textures only
    std::vector<float> init;       // the start value (size floats) when the file gives `init`, else empty
    std::optional<float> perturb;  // otherwise: start at the scene's value plus a seeded offset of this size
    // 0.01 unless the file gives `lr`; a length's (a translation, vertices, a position, the camera's eye or
    // target) 0.01 times the radius of the box it is measured in, where that is over 1 (scene-format.md).
    float lr = 0.01f;
};
// The ranges of camera.intrinsics' floats at the scene's camera resolution (Parameter::runs): fx and fy
// [kShortestFocal, longest_focal] across the width and the height, cx and cy anywhere (off the image: a crop).
std::vector<Parameter::Run> intrinsics_ranges(const Camera& camera);


struct Optimization {
    bool target_is_scene = true;            // false: target_images are the truth
    std::vector<std::string> target_files;  // one per view, relative to the scene, `{view}` expanded
    std::vector<LinearImage> target_images; // one per view, linear RGBA at the views' resolution, RGB
                                            // composited over the background
    bool mask_alpha = false;                // "mask": "alpha": target alpha 0 leaves a pixel out of the loss
    std::vector<Parameter> parameters;      // in file order
    std::string loss = "l2";        // a loss plug-in (adjoint/app/plugins.h): l2, l1, silhouette
    std::string optimizer = "adam"; // an optimizer plug-in: adam, sgd
    // The optimizer's keys (betas and eps for adam, momentum for sgd), concatenated in its key order,
    // defaults filled in. setting() reads one by name.
    std::array<float, 4> optimizer_settings{0.9f, 0.999f, 1e-8f, 0.0f};
    // The value of the optimizer's key `name` (its first number; index picks another); adjoint::Error when the
    // optimizer has no such key.
    float setting(std::string_view name, uint32_t index = 0) const;
    float lr_decay = 1.0f;
    uint32_t iterations = 100;
    uint32_t views_per_iteration = 1;
    uint64_t seed = 0;
    float laplacian = 0, edge_length = 0; // regularizer weights
};

// ---- the scene ----------------------------------------------------------------------------------------
// The image of a dataset's view: its file, relative to the scene's folder, and the size the dataset says it
// has (its camera's; 0 × 0 when the dataset does not say), which the file must have.
struct ViewImage {
    std::string file;
    Resolution size;
    std::string source;   // where the dataset names it, for errors: "transforms.json: frames[3].file_path"
};

struct Scene {
    std::filesystem::path source_file; // the file it came from (empty from a string)
    std::string display_name;          // how errors name it
    Camera camera;
    std::vector<Camera> views;         // at least one; each with the camera's resolution
    Resolution file_resolution{};      // camera.resolution as the file gives it, before --resolution ({0, 0}: none)
    std::vector<ViewImage> view_images; // views from a dataset: each view's image
    float3 background{};               // linear RGB
    int32_t background_light = -1;     // `background: "environment"`: the light drawn behind the scene, or −1
    std::vector<Material> materials;
    std::vector<LinearImage> textures; // the materials' textures (RGB; colour textures decoded from sRGB)
    std::vector<Mesh> meshes;
    std::vector<Light> lights;
    RenderSettings render;
    std::optional<Optimization> optimize;

    // Index by name, or −1.
    int find_material(std::string_view name) const;
    int find_mesh(std::string_view name) const;
    int find_light(std::string_view name) const;
};

struct LoadOptions {
    std::optional<Resolution> resolution; // replaces camera.resolution (the programs' --resolution)
};

Scene load_scene(const std::filesystem::path& file, const LoadOptions& options = {});
// For tests and tools: files named in the JSON are read relative to base_dir; errors name display_name.
Scene load_scene_from_string(std::string_view json_text, const std::filesystem::path& base_dir,
                             const std::string& display_name, const LoadOptions& options = {});

// "WxH" (e.g. "512x384"), each side 1..max_resolution; otherwise SceneError naming `--resolution`.
Resolution parse_resolution(std::string_view text);
// SceneError naming `resolution` unless each side is in 1..max_resolution (the load option and override_resolution
// check it: a side of 0 leaves the renderer no pixel).
void check_resolution(Resolution resolution);
// Gives the camera and every view this resolution; SceneError if target images have another one.
void override_resolution(Scene& scene, Resolution resolution);

// The parameter a path addresses, with its size (init empty, lr default); nullopt with the reason in
// *why when the path addresses nothing (the reason starts "unknown parameter <path>" for a bad name).
std::optional<Parameter> find_parameter(const Scene& scene, std::string_view path, std::string* why = nullptr);
// Whether a texture parameter holds data, not colour (a normal or metallic-roughness map): its files hold the
// values as stored, as the scene's own texture files do, not sRGB-encoded.
bool is_data_texture(const Scene& scene, const Parameter& parameter);
// The scene's current value of a parameter (size floats; a texture at the material texture's own
// resolution, RGB).
std::vector<float> parameter_value(const Scene& scene, const Parameter& parameter);
// The same in the parameter's own shape (size floats): a texture of another size than texture_width ×
// texture_height resampled to it (shrunk, box-filtered; enlarged, sampled bilinearly: detail::resample_texture).
// The truth a texture optimized at another resolution is measured against.
std::vector<float> parameter_value_at_its_size(const Scene& scene, const Parameter& parameter);
// Writes a value of parameter.size floats into the scene (a texture of texture_width × texture_height
// replaces the material's texture, alpha 1; vertices update the mesh via update_from_obj_positions).
void set_parameter_value(Scene& scene, const Parameter& parameter, std::span<const float> value);
// Applies the values an optimization wrote (see the header comment) onto the scene; SceneError naming the
// file and the JSON path of any problem.
void apply_params_file(Scene& scene, const std::filesystem::path& params_json);
// Why `value` (in the run's units) cannot be the parameter's in this scene, or "": its kind's refusal, a number
// outside the format's range [lo, hi] or not finite, or cameras it would leave without a picture (eye at target).
std::string parameter_value_problem(const Scene& scene, const Parameter& parameter, std::span<const float> value);
// A value in the units of the scene file and params.json from the run's, and back: camera.intrinsics are pixels at
// the file's camera.resolution there and at camera.resolution (--resolution's) in a run; others are the same.
std::vector<float> value_in_file_units(const Scene& scene, ParameterKind kind, std::vector<float> value);
std::vector<float> value_in_run_units(const Scene& scene, ParameterKind kind, std::vector<float> value);

} // namespace adjoint::app
