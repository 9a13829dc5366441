// A scene on the device: world-space geometry, the parameter buffer that holds every value the shading
// reads (material colours, textures' level 0, lights), the tables that say where each value lives, the
// textures' mip chains (the engine's texture set) and the views.
#pragma once
#include "raster.h"
#include "shading.h"

#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/scene.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <vector>

namespace adjoint::app {

// Where each scene value lives in the flat parameter buffer (offsets in floats), derived from the kinds'
// descriptors (parameter_kinds.h): for every kind, in ParameterKind order, one slot per element of its slot
// space (the targets it applies to, every texture, every view) of the kind's size there. Every value has a
// place, free or not, so one set of kernels serves every choice of free parameters. Rotations are stored as
// raw quaternions [w, x, y, z] that the kernels renormalize; camera values per view (only view 0's can be free).
// Texture slots start on a whole float4 and the buffer ends on one (up to 3 unused zeros before each and at the
// end), so that kernels read and write a texture's rows and the optimizer's arrays a float4 at a time.
struct ParamLayout {
    static constexpr uint32_t kNoSlot = ~0u;
    struct Slot {
        ParameterKind kind;
        uint32_t element; // a target, a Scene::textures entry or a view, as the kind's SlotSpace says
        uint32_t offset, size;
    };
    std::vector<Slot> slots; // in buffer order
    uint32_t size = 0;
    std::array<std::vector<uint32_t>, parameter_kind_count> offsets; // per kind, per element; kNoSlot: none

    // The first float of a kind's slot for an element; adjoint::Error when it has none.
    uint32_t at(ParameterKind kind, uint32_t element) const;
    // ... or kNoSlot (a textured material's albedo, an ambient light's position).
    uint32_t find(ParameterKind kind, uint32_t element) const;
    // The number of elements of the kind's slot space (every texture, every view, every target).
    uint32_t elements(ParameterKind kind) const { return uint32_t(offsets[size_t(kind)].size()); }
    // A parameter's first float: its target's element's slot (camera parameters: view 0's).
    uint32_t of(const Scene& scene, const Parameter& p) const;
    // The slots' floats one after another, without the unused floats between them: what checkpoints hold, so
    // that they do not depend on the buffer's alignment (checkpoints written before texture slots were aligned,
    // which held the layout's floats unpadded, load as they are). pack takes `size` floats, unpack gives them.
    uint32_t packed_size() const;
    std::vector<float> pack(const std::vector<float>& values) const;
    std::vector<float> unpack(const std::vector<float>& packed) const;
};

inline uint32_t whole_float4s(uint32_t floats) { return (floats + 3) / 4 * 4; }

ParamLayout make_layout(const Scene& scene);

// Whether the optimization frees any parameter of these kinds (whose gradients the kernels then scatter).
bool any_free(const Scene& scene, std::initializer_list<ParameterKind> kinds);

// A host vector on the device (at least one element: a kernel argument cannot be an empty buffer).
template <typename T>
Buffer<T> upload(Device& device, Stream& stream, const std::vector<T>& v) {
    auto b = device.create_buffer<T>(std::max<size_t>(v.size(), 1));
    if (!v.empty()) stream << b.copy_from(v.data());
    return b;
}
std::vector<float> gather_values(const Scene& scene, const ParamLayout& layout);

struct SceneData {
    ParamLayout layout;
    DeviceGeometry geometry;
    Buffer<gpu::Material> materials;
    // Scene::textures in order (repeat, mipmapped), level 0 copied from the parameter buffer at texture t's
    // slot, layout.at(ParameterKind::material_texture, t); one 1x1 stand-in when the scene has none
    // (a kernel argument cannot be absent).
    TextureSet<float3> textures;
    // Per Scene::textures entry: some free parameter holds its texels. The others never change, so their mip
    // chains are built once and no gradient is carried down them.
    std::vector<bool> texture_varies;
    // An environment map: its texture and the first of its environment_levels prefiltered maps after the
    // scene's textures in the set.
    struct Environment {
        uint32_t map, first;
        bool varies;   // the map is a free parameter of the scene's optimization
    };
    std::vector<Environment> environments;
    ShadingPlan shading;                    // the material models used and the light buffer's runs of one type
    Buffer<LightSlots> lights;              // per light, ordered by type: where its values are
    std::vector<ViewCamera> views;
    Buffer<gpu::ViewRec> view_recs;         // the views' cameras as kernels read them (values in the parameter buffer)
    float3 background;
};

// The texture set's textures, in order: Scene::textures at their sizes (environment maps wrap around in u and
// stop at the poles), each environment map's prefiltered maps (plugins.h, "environment maps"), then the split
// sum's table when a light is a sky; one 1x1 stand-in when there are none (a kernel argument cannot be absent).
// `environments` and `dfg`, when given, receive where those lie.
std::vector<TextureDesc> texture_set_descs(const Scene& scene,
                                          std::vector<SceneData::Environment>* environments = nullptr,
                                          uint32_t* dfg = nullptr);

// Uploads geometry (transformed to world space on the host: nothing moves it in this renderer) and tables.
SceneData upload_scene(Device& device, Stream& stream, const Scene& scene);

} // namespace adjoint::app
