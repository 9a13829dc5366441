// The plug-ins a scene file names: material models, light types, losses and optimizers (one file each in
// app/src/scene/plugins/, listed in registry.cpp). A plug-in holds its name, its scene keys and its formula as
// DSL code, so the loader, the renderer, the optimizer, the reports and the studio all derive from the same
// definition: adding a material model, a light type, a loss or an optimizer is one new file and one registration line
// (app/GUIDE.md).
#pragma once
#include <adjoint/adjoint.h>

#include <array>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace adjoint::app {

struct Light;
struct Scene;
namespace detail {
class JsonValue;   // a located JSON value of the scene file (app/src/scene/json_value.h)
}

// Reads of the parameter buffer in shading code, whatever its type: plain values, or a differentiable buffer
// whose reads scatter their adjoints inside $autodiff.
struct ParamReads {
    std::function<Float(const UInt&)> read;
    // Trilinear filtering of a texture of the scene's texture set (its index) at a level of detail: what an
    // environment light reads of its map and of the maps prefiltered from it.
    std::function<Float3(const UInt& texture, const Float2& uv, const Float& lod)> sample;
    Float3 read3(const UInt& at) const { return make_float3(read(at), read(at + 1u), read(at + 2u)); }
};

// ---- light types: `lights[i].type` -------------------------------------------------------------------------
// Where a light's values live in the parameter buffer (offsets in floats): its vector (a point light's
// position, a directional light's direction of travel, an sh light's coefficients; unused by ambient
// light), colour (3), intensity (1) and its count of vectors (an sh light's coefficients; 1 otherwise).
// An environment light's map: its index in the texture set (kNoTexture for a uniform sky), the first of the
// maps prefiltered from it (environment_levels), and its rotation's slot (1 float, degrees).
struct LightSlots {
    uint32_t vector, color, intensity, count;
    uint32_t texture, prefiltered, rotation, pad;
};
inline constexpr uint32_t kNoTexture = 0xFFFFFFFFu;

// What a light delivers to a surface point: the unit direction towards the light and the radiance arriving
// (colour times intensity times any fall-off).
struct LightIncoming {
    Float3 direction;
    Float3 radiance;
};

// Where a light that casts shadows stands, for the shadow test (render/shadow_dsl.h): a point light's position
// (`point`), or the unit direction towards a directional light (a sun: parallel rays).
struct ShadowSource {
    Float3 at;
    bool point = false;
};

// A light that arrives from every direction, the same at every point (ambient, spherical harmonics): what a
// material's sky() asks of it.
struct SkyLight {
    // The cosine-weighted irradiance at the unit normal n, over π (what a white Lambertian surface reflects).
    std::function<Float3(const Float3& n)> diffuse;
    // The radiance around the unit direction r, blurred by a GGX lobe of this roughness (the split sum's
    // first factor).
    std::function<Float3(const Float3& r, const Float& roughness)> specular;
    // The split sum's second factor (A, B): the GGX lobe's directional albedo is F0·A + B (Schlick's
    // Fresnel), as a function of n·v and the roughness; and the lean t of the direction to fetch the first
    // factor along, normalize((1 − t)·n + t·r). The renderer fills it from a table it integrates (dfg_table),
    // whatever the light.
    std::function<Float3(const Float& nv, const Float& roughness)> dfg = {};
    // The roughness to pass specular for a lobe of this roughness seen at this n·v: the one at which the
    // prefiltered maps' blend spreads as this lobe does (the same length of the mean light direction; a lobe
    // seen obliquely is narrower). From the same table.
    std::function<Float(const Float& nv, const Float& roughness)> blur = {};
};

// GGX's peak grows as 1/α²: below this roughness a point light's highlight is narrower than a pixel and its
// float value overflows the gradient; glTF's lobe (the pbr model) reads max(roughness, kMinRoughness) (the stored
// value is left alone, and a fit can still reach 0: the gradient below it is zero).
inline constexpr float kMinRoughness = 0.03f;

// The table behind SkyLight::dfg and blur: kDfgSize x 2·kDfgSize texels, n·v across (texel centres at
// (i + 0.5) / kDfgSize), roughness down, (A, B, lean) in the first kDfgSize rows and (blur, 0, 0) in the
// next, for glTF's specular lobe (GGX, height-correlated Smith, roughness floored at kMinRoughness), by
// importance sampling on the host (computed once).
inline constexpr uint32_t kDfgSize = 32;
const std::vector<float>& dfg_table();

struct LightModel {
    std::string_view name;
    std::span<const std::string_view> keys;    // its own keys (every light has name, type, color, intensity)
    std::string_view vector_key;               // the key its vector comes from ("position"), or empty
    // The loader: its own keys of `entry` into `light` (errors name the key); files relative to base_dir,
    // images it loads appended to the scene's textures.
    void (*read)(const detail::JsonValue& entry, const std::filesystem::path& base_dir, Scene& scene, Light& light);
    // The shading of a light from one direction: what arrives at `position`; nullptr for a sky light.
    LightIncoming (*incoming)(const ParamReads& params, const Expr<LightSlots>& light, const Float3& position);
    // The shading of a light from every direction; nullptr for a light from one direction.
    SkyLight (*sky)(const ParamReads& params, const Expr<LightSlots>& light);
    // The radiance arriving along a unit direction, for a light seen directly (`background: "environment"`);
    // nullptr for a light that cannot be seen.
    Float3 (*radiance)(const ParamReads& params, const Expr<LightSlots>& light, const Float3& direction) = nullptr;
    // A light that may cast shadows (`"shadows": true`): where it stands; nullptr for a type that cannot.
    ShadowSource (*shadow_source)(const ParamReads& params, const Expr<LightSlots>& light) = nullptr;
};

// ---- environment maps ---------------------------------------------------------------------------------------
// An environment light's map is equirectangular (Y up): direction d looks up u = 0.5 + atan2(d.x, −d.z) / 2π,
// v = acos(d.y) / π (row 0 the zenith). For the split sum, the renderer prefilters it every time the map
// changes into one map per roughness of environment_roughness (the radiance around a direction weighted by a
// GGX lobe of that roughness, normalised: a uniform sky stays uniform) and one of the cosine-weighted
// irradiance / π, all equirectangular, from a copy of the map at most filter_source_width wide; roughness
// between the levels blends the two around it, and below the first the map itself.
inline constexpr std::array<float, 4> environment_roughness{0.25f, 0.5f, 0.75f, 1.0f};
inline constexpr uint32_t environment_levels = uint32_t(environment_roughness.size()) + 1; // + irradiance
// The width of each prefiltered map (its height is half), in environment_roughness order, then irradiance.
inline constexpr std::array<uint32_t, environment_levels> environment_level_width{64, 32, 32, 32, 16};

inline Float2 equirect_uv(const Float3& d) {
    constexpr float inv_two_pi = 0.15915494309189535f, inv_pi = 0.3183098861837907f;
    return make_float2(0.5f + atan2(d.x, -d.z) * inv_two_pi, acos(clamp(d.y, -1.0f, 1.0f)) * inv_pi);
}
inline Float3 equirect_direction(const Float2& uv) {
    constexpr float pi = 3.14159265358979f;
    Float phi = (uv.x - 0.5f) * (2.0f * pi), theta = uv.y * pi;
    Float s = sin(theta);
    return make_float3(s * sin(phi), cos(theta), -s * cos(phi));
}
// A direction in the world turned into the map's frame: the map is turned `degrees` about +Y (counter-clockwise
// seen from above), so the world direction d sees the map at R(−degrees)·d.
inline Float3 into_map_frame(const Float3& d, const Float& degrees) {
    Float a = degrees * 0.017453292519943295f;
    Float c = cos(a), s = sin(a);
    return make_float3(c * d.x - s * d.z, d.y, s * d.x + c * d.z);
}

// ---- material models: `materials.<m>.model` ------------------------------------------------------------------
// A property of a material model: a scene key and a parameter path segment (`materials.<m>.<name>`). A
// material's values are its model's properties concatenated in order, one slot of the parameter buffer.
struct MaterialProperty {
    std::string_view name;
    uint32_t floats = 3;                 // 3: an RGB colour ([r, g, b] >= 0 in the file), 1: a number
    std::array<float, 3> defaults{};     // when the file is silent
    float file_lo = 0, file_hi = 1e30f;  // a number in the file must lie in [file_lo, file_hi]
    float lo = 0, hi = 1;                // what the optimizer keeps each float inside
    std::string_view expected;           // names the file's range in errors: "a number >= 0"
    std::string_view units;              // for tables: "linear RGB", "exponent", ...
    bool required = false;               // the file gives it or a texture that replaces it
};

// A texture a material model reads (a file key, and a texture parameter `materials.<m>.<name>`): the scene's
// textures are RGB; `srgb` colour textures are decoded from sRGB, data textures are read as stored.
struct MaterialTexture {
    std::string_view name;
    bool srgb = true;
    std::span<const std::string_view> replaces;   // the properties it stands in for (a file gives one or the other)
    // Read in the surface's tangent frame (a normal texture): the renderer computes tangent frames only for
    // scenes with a material that has such a texture.
    bool tangent_space = false;
};

// What a model's evaluate() reads at a surface point: its properties from the parameter buffer and its
// textures (sampled trilinearly), by index into its own tables; has_texture says whether the material has
// texture j (a runtime value: one kernel serves every material of the model).
struct MaterialReads {
    std::function<Float3(uint32_t property)> value;      // a one-float property in every channel
    std::function<Float3(uint32_t texture)> texture;
    std::function<Bool(uint32_t texture)> has_texture;
    Float3 vertex_color;                                 // white unless the mesh has vertex colours
    Float3 normal;                                       // unit, facing the eye
    Float4 tangent;                                      // along +u, w the handedness; 0 without a UV frame
};

// A model's values at a surface point, packed as the model likes (read once per pixel, used per light), and
// the normal it shades with (the surface's, or one a normal texture bends).
struct MaterialPoint {
    std::array<Float3, 4> v;
    Float3 normal;
};

struct MaterialModel {
    std::string_view name;
    std::string_view summary;   // one line, for tables
    std::span<const MaterialProperty> properties;
    std::span<const MaterialTexture> textures;
    MaterialPoint (*evaluate)(const MaterialReads& reads);
    // Radiance reflected towards v (unit, to the eye) from light arriving along l.direction with l.radiance
    // (already including the light's fall-off); n is the unit normal facing the eye. Includes the cosine.
    Float3 (*direct)(const MaterialPoint& m, const Float3& n, const Float3& v, const LightIncoming& light);
    // Radiance reflected towards v under a light from every direction.
    Float3 (*sky)(const MaterialPoint& m, const Float3& n, const Float3& v, const SkyLight& light);
    // Radiance emitted towards the eye.
    Float3 (*emitted)(const MaterialPoint& m);
};

// ---- losses: `optimize.loss` ----------------------------------------------------------------------------
// The loss of one pixel from the rendered and the target linear RGBA (alpha is coverage: 1 inside, 0 on the
// background, fractional at antialiased or soft edges). The reported loss is its mean over pixels, RGB channels
// and views; the gradient of every consumer is $autodiff of this one expression.
struct LossModel {
    std::string_view name;     // as the scene format spells it
    std::string_view summary;  // one line, for --help and the studio
    Float (*pixel)(const Float4& rendered, const Float4& target);
};

// ---- optimizers: `optimize.optimizer` ---------------------------------------------------------------------
// A key of the `optimize` block that an optimizer reads: `count` numbers, each in [lo, hi) (lo excluded when
// lo_open), the defaults when the file is silent, and the message that names the expected shape.
struct OptimizerKey {
    std::string_view name;
    uint32_t count = 1;
    std::array<float, 4> defaults{};
    float lo = 0, hi = 1;
    bool lo_open = false;
    std::string_view expected;   // e.g. "[beta1, beta2] of numbers in [0, 1)"
    bool plural = false;         // "betas apply", "eps applies"
};

// One element's step, in DSL values: the optimizer reads its state (named arrays beside the parameters, which
// the checkpoint saves by name) and returns the amount to subtract from the parameter.
struct OptimizerStepInputs {
    Float gradient;
    Float rate;                  // the element's learning rate times the decay
    Float4 settings;             // the keys' values, concatenated in key order
    Float4 per_iteration;        // what host_constants() computed for this iteration
};

struct OptimizerModel {
    std::string_view name;
    std::span<const OptimizerKey> keys;
    std::span<const std::string_view> state;   // the names of its per-element state arrays (at most 2)
    // Per-iteration constants (e.g. Adam's bias corrections) for `iteration` (0-based), from the settings.
    std::array<float, 4> (*host_constants)(const std::array<float, 4>& settings, uint32_t iteration);
    // The step of one element; reads and updates state[0 .. state.size()).
    Float (*step)(const OptimizerStepInputs& in, std::array<Float, 2>& state);
};

// ---- the registries ---------------------------------------------------------------------------------------
std::span<const MaterialModel* const> material_models();
const MaterialModel* find_material_model(std::string_view name);
const MaterialModel& material_model(std::string_view name);
// The index of a model in material_models() (the device's material table stores it).
uint32_t material_model_index(const MaterialModel& model);
std::span<const LightModel* const> light_models();
const LightModel* find_light_model(std::string_view name);
const LightModel& light_model(std::string_view name);
std::span<const LossModel* const> loss_models();
std::span<const OptimizerModel* const> optimizer_models();
// By name; nullptr when there is none of that name.
const LossModel* find_loss(std::string_view name);
const OptimizerModel* find_optimizer(std::string_view name);
// By name; adjoint::Error when there is none (names the registered ones).
const LossModel& loss_model(std::string_view name);
const OptimizerModel& optimizer_model(std::string_view name);

} // namespace adjoint::app

ADJOINT_STRUCT(adjoint::app::LightSlots, vector, color, intensity, count, texture, prefiltered, rotation, pad)
