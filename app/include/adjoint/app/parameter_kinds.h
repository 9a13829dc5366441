// Parameters as data: one descriptor per ParameterKind (path, shape, range, scene access, device slot,
// perturbation, error metric, storage), from which the loader, the device layout, the bounds, params.json
// and the errors all follow. A new kind is its enum value and one entry of the table in
// app/src/scene/parameter_kinds.cpp.
#pragma once
#include <adjoint/app/scene.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace adjoint::app {

namespace detail {
class JsonValue; // the scene loader's path-tracking JSON reader (app/src/scene/json_value.h)
}

// The first segment of a path: `materials.<name>.*`, `lights.<name>.*`, `meshes.<name>.*`, `camera.*`.
enum class ParameterCollection : uint8_t { materials, lights, meshes, camera };

// Where the device layout keeps a kind's values: one slot per element of this space, each of the kind's
// size for that element. A parameter's slot is the one of its target's element (ParameterKindInfo::element).
enum class SlotSpace : uint8_t {
    targets,  // one per target of the collection that the kind applies to (refusal returns "")
    textures, // one per Scene::textures entry (the texture set copies level 0 from it); a material's texture
              // parameter lives in its texture's slot
    views,    // one per view; the camera's parameters live in view 0's (only single-view scenes free them)
};

// How `perturb` moves the start value off the scene's value (seeded; perturbed_value in the optimizer).
enum class Perturbation : uint8_t {
    direction,   // a random direction of length perturb · max(|v|, 1)
    per_element, // every float by a uniform offset in [−perturb, perturb]; a value of up to 4 floats (a 1x1
                 // texture, a single OBJ position) takes a direction instead, as it always has
    rotation,    // perturb degrees about a random axis, applied after the scene's rotation
};

// The parameter error of scene-format.md.
enum class ErrorMetric : uint8_t {
    relative_l2,    // ‖p − p_true‖ / max(‖p_true‖, 1)
    geodesic_angle, // the angle between the two rotations, radians
    wrapped_degrees,  // a scalar angle in degrees: |p − p_true| the shorter way round (radians, as the above)
    direction_angle,  // the angle between two directions (their lengths apart: a light's is not rendered), radians
};
// Whether a kind's error needs its value on the host (an angle between rotations or directions), not the
// optimizer's sums of |p − p_true|^2 and |p_true|^2.
inline bool error_measured_on_host(ErrorMetric m) {
    return m == ErrorMetric::geodesic_angle || m == ErrorMetric::direction_angle;
}

// How params.json and the report store a value: numbers, or an sRGB PNG beside params.json.
enum class ParameterStorage : uint8_t { value, texture };

// What read_init needs besides the JSON value.
struct InitContext {
    const Scene& scene;
    std::filesystem::path base_dir; // files named in the scene are relative to it
    bool resolution_given = false;  // the entry gives `resolution` (a texture's init PNG must match it)
};

// The `property` argument of refusal() when the layout asks whether an element has a slot at all.
inline constexpr uint32_t kWholeElement = ~0u;

struct ParameterKindInfo {
    ParameterKind kind;
    ParameterCollection collection;
    const char* property;     // the path's last segment (material kinds: the model's property or texture names)
    bool geometry;            // moves geometry (placement, vertices, camera): the dynamic renderer
    float lo, hi;             // the valid range of every float (material values: the model property's)
    Perturbation perturbation;
    ErrorMetric metric;
    const char* units;        // of the value, for tables: "linear RGB", "scene units", "degrees", ...; "scene units"
                              // also scales the default learning rate with the scene (read_parameters)
    ParameterStorage storage;
    SlotSpace slot;

    // Why the kind does not apply to this target (a directional light has no position), or "". `property`
    // is Parameter::property (which of a material model's properties or textures), 0 for other kinds.
    std::string (*refusal)(const Scene& scene, uint32_t target, uint32_t property);
    // The slot element a target's value lives in (its texture, view 0; the target itself otherwise).
    uint32_t (*element)(const Scene& scene, uint32_t target, uint32_t property);
    // The number of floats at an element, computed from sizes (a texture is not built for it).
    size_t (*size)(const Scene& scene, uint32_t element);
    // The scene's value at an element: size(scene, element) floats into out (a parameter's value is
    // Parameter::size of them from Parameter::offset).
    void (*read)(const Scene& scene, uint32_t element, float* out);
    // Writes parameter.size floats into the scene (see set_parameter_value).
    void (*write)(Scene& scene, const Parameter& parameter, std::span<const float> value);
    // Why these floats cannot be a value of the kind (a zero quaternion), or nullptr.
    const char* (*invalid)(std::span<const float> value);
    // An `init` of optimize.parameters, shape-checked (SceneError at its JSON path), as parameter.size
    // floats; a texture's init may set the parameter's resolution and size.
    std::vector<float> (*read_init)(const detail::JsonValue& init, const InitContext& context, Parameter& parameter);
};

inline constexpr size_t parameter_kind_count = 18;

// Every kind's descriptor, in ParameterKind order (which is also the order of the device layout).
std::span<const ParameterKindInfo> parameter_kinds();
const ParameterKindInfo& kind_info(ParameterKind kind);
// The descriptor a path's collection and property name, or nullptr.
const ParameterKindInfo* find_kind(std::string_view collection, std::string_view property);
const char* collection_name(ParameterCollection collection);
// How an error of this metric reads in a table: "relative" or "radians".
const char* error_units(ErrorMetric metric);

// A parameter's error as people read it (loss.csv's error columns, the progress line, report.png): rotations
// and angles (a light's rotation, the shorter way round) in degrees, positions ("scene units" kinds) as the RMS
// distance per point in scene units, anything else as the relative error of its metric. From the sums the
// optimizer keeps: d2 = |p - p_true|^2, t2 = |p_true|^2 over `size` floats; a rotation's from its geodesic angle
// in radians.
enum class ErrorUnit : uint8_t { degrees, scene_units, relative };
ErrorUnit error_unit(const ParameterKindInfo& kind);
const char* error_unit_name(ErrorUnit unit);   // "deg", "scene_units", "relative": column names, labels
double error_in_units_from_sums(const ParameterKindInfo& kind, double d2, double t2, size_t size);
// |d| degrees the shorter way round the circle (ErrorMetric::wrapped_degrees).
double wrap_degrees(double d);
double error_in_units(const ParameterKindInfo& kind, const float* value, const float* truth, size_t size);

} // namespace adjoint::app
