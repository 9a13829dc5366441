// The environment stage: each prefiltered map is a weighted sum over the texels of a small level of the
// environment map (at most 64 columns), exact in solid angle; the backward pass is the same sum under
// $autodiff, whose texel reads scatter their adjoints into the map's gradients.
#include "render/environment_stage.h"

#include <algorithm>

namespace adjoint::app {

namespace {

constexpr float kPi = 3.14159265358979f;
// A texel whose GGX weight is below this fraction of the lobe's peak is left out: it changes a
// prefiltered value by less than 1e-4 of it, and leaving it out spares its gradient's scatter.
constexpr float kNegligible = 1e-4f;
// The source level is the first of the map's that is at most this wide.
constexpr uint32_t source_width_for(uint32_t level_width) { return std::max(level_width, 32u); }

// The prefiltered value at output texel `pix` of a width x height map, as the sum over the source level's
// texels: `add(weight, x, y)` once per sample that counts, to be normalised by the sum of the weights. Each
// texel is `sub` x `sub` samples (its value constant over its cell): one sample per texel at its centre is no
// quadrature for a map narrower than the level wants (a 2x1 map's two centres are antipodal, so every
// irradiance texel saw exactly one of them: a hard split; a narrow lobe near a pole saw none: black).
// Irradiance (roughness < 0): the clamped cosine over π times the solid angle; a GGX level: glTF's specular
// lobe seen along the direction (N = V = R, the split sum's assumption): D·V·(n·l) times the solid angle.
// (Karis weights by D·(n·l) alone; with V the level is exact for a view along the normal.)
template <typename Add>
void for_each_weight(const UInt2& pix, const UInt& width, const UInt& height, const UInt& source_width,
                     const UInt& source_height, const UInt& sub, const Float& roughness, Add add) {
    Float2 uv = make_float2((cast<float>(pix.x) + 0.5f) / cast<float>(width),
                            (cast<float>(pix.y) + 0.5f) / cast<float>(height));
    Float3 r = equirect_direction(uv);
    Float alpha = roughness * roughness;
    Float a2 = max(alpha * alpha, 1e-8f);
    Float peak = 1.0f / (kPi * a2);
    Float sw = cast<float>(source_width * sub), sh = cast<float>(source_height * sub);
    Float column_angle = 2.0f * kPi / sw;
    $for (y, source_height * sub) {
        Float fy = cast<float>(y);
        Float band = cos(fy * kPi / sh) - cos((fy + 1.0f) * kPi / sh);   // the row's solid angle over its width
        $for (x, source_width * sub) {
            Float3 d = equirect_direction(make_float2((cast<float>(x) + 0.5f) / sw, (fy + 0.5f) / sh));
            Float c = dot(r, d);
            Float area = column_angle * band;
            Float3 h = normalize(r + d);
            Float nh = dot(r, h);
            Float q = nh * nh * (a2 - 1.0f) + 1.0f;
            Float ggx = a2 / (kPi * q * q);
            Float cp = max(c, 0.0f);
            Float vis = 0.5f / (cp + sqrt(cp * cp * (1.0f - a2) + a2));   // height-correlated Smith at n·v = 1
            Float weight = ite(roughness < 0.0f, c * area / kPi, ggx * vis * c * area);
            Bool counts = (c > 0.0f) & ((roughness < 0.0f) | (ggx > kNegligible * peak));
            $if (counts) { add(weight, x / sub, y / sub); };
        };
    };
}

auto forward_kernel() {
    return Kernel2D([](TextureSetFloat3 textures, UInt map, UInt level, UInt source_width, UInt source_height,
                       UInt sub, Float roughness, BufferFloat out, UInt offset) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        // The level's records read once, and its texels without the wrap's arithmetic (TextureLevelRef): the
        // loop's indices lie inside it. With TextureRef::read this kernel took 2.3x as long on lavapipe.
        auto source = textures.texture(map).level(level);
        Float3 sum = make_float3(0.0f);
        Float total = 0.0f;
        for_each_weight(pix, width, height, source_width, source_height, sub, roughness,
                        [&](const Float& w, const UInt& x, const UInt& y) {
                            sum = sum + source.read(x, y) * w;
                            total = total + w;
                        });
        // Normalised by the weights' sum at every level: for the irradiance that sum is 1 up to the quadrature's
        // error (~5e-4), and dividing by it makes a uniform map exact (as the uniform sky it stands for).
        Float3 value = sum / max(total, 1e-30f);
        UInt at = offset + 3u * (pix.y * width + pix.x);
        out.write(at, value.x);
        out.write(at + 1u, value.y);
        out.write(at + 2u, value.z);
    });
}

// Seeded with the gradient of the prefiltered texel; the normaliser depends on no texel, so it is summed
// before the differentiated block.
auto backward_kernel() {
    return Kernel2D([](TextureSetFloat3 textures, UInt map, UInt level, UInt source_width, UInt source_height,
                       UInt sub, Float roughness, BufferFloat grads, UInt offset) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt width = dispatch_size().x, height = dispatch_size().y;
        UInt at = offset + 3u * (pix.y * width + pix.x);
        Float3 g = make_float3(grads.read(at), grads.read(at + 1u), grads.read(at + 2u));
        $if ((g.x != 0.0f) | (g.y != 0.0f) | (g.z != 0.0f)) {
            Float total = 0.0f;
            for_each_weight(pix, width, height, source_width, source_height, sub, roughness,
                            [&](const Float& w, const UInt&, const UInt&) { total = total + w; });
            total = max(total, 1e-30f);
            auto source = textures.texture(map).level(level);
            $autodiff {
                Float3 sum = make_float3(0.0f);
                for_each_weight(pix, width, height, source_width, source_height, sub, roughness,
                                [&](const Float& w, const UInt& x, const UInt& y) {
                                    sum = sum + source.read(x, y) * w;
                                });
                adjoint::backward(dot(sum, g) / total);
            };
        };
    });
}

} // namespace

struct EnvironmentStage::Kernels {
    Shader<2> forward, backward;
};

EnvironmentStage::EnvironmentStage(Device& device, const SceneData& scene) {
    if (scene.environments.empty()) return;
    uint32_t floats = 0;
    for (const SceneData::Environment& e : scene.environments)
        for (uint32_t i = 0; i < environment_levels; ++i) {
            Level l;
            l.index = i;
            l.texture = e.first + i;
            l.width = scene.textures.width(l.texture);
            l.height = scene.textures.height(l.texture);
            l.map = e.map;
            l.varies = e.varies;
            const uint32_t want = source_width_for(l.width);
            l.source_level = 0;
            while (l.source_level + 1 < scene.textures.levels(e.map) &&
                   scene.textures.width(e.map, l.source_level) > want)
                ++l.source_level;
            l.source_width = scene.textures.width(e.map, l.source_level);
            l.source_height = scene.textures.height(e.map, l.source_level);
            // A map narrower than `want` is sampled as finely as one `want` wide (a 2x1 map: 32 x 32 samples a
            // texel for the 64-wide level, 16 x 16 for the others).
            l.sub = (want + l.source_width - 1) / l.source_width;
            l.offset = floats;
            floats += l.width * l.height * 3;
            levels_.push_back(l);
        }
    values_ = device.create_buffer<float>(floats);
    grads_ = device.create_buffer<float>(floats);
    k_ = std::make_unique<Kernels>(Kernels{device.compile(forward_kernel(), {.name = "environment_prefilter"}),
                                           device.compile(backward_kernel(), {.name = "environment_prefilter_backward"})});
}

EnvironmentStage::EnvironmentStage(EnvironmentStage&&) noexcept = default;
EnvironmentStage::~EnvironmentStage() = default;

namespace {
float roughness_of(uint32_t index) {
    return index < environment_roughness.size() ? environment_roughness[index] : -1.0f;
}
} // namespace

void EnvironmentStage::forward(Stream& stream, const SceneData& scene) const {
    for (const Level& l : levels_)
        if (!done_ || l.varies)
            stream << k_->forward(scene.textures, l.map, l.source_level, l.source_width, l.source_height, l.sub,
                              roughness_of(l.index), values_, l.offset)
                      .dispatch(l.width, l.height)
                   << scene.textures.copy_base_from(l.texture, values_, l.offset);
    done_ = true;
}

void EnvironmentStage::backward(Stream& stream, const SceneData& scene) const {
    // Only a free map's prefiltered maps carry a gradient anywhere (a fixed map's would end at its texels).
    if (std::none_of(levels_.begin(), levels_.end(), [](const Level& l) { return l.varies; })) return;
    stream << grads_.fill_zero();
    for (const Level& l : levels_)
        if (l.varies) stream << scene.textures.add_base_grad_to(l.texture, grads_, l.offset);
    for (const Level& l : levels_)
        if (l.varies)
            stream << k_->backward(scene.textures, l.map, l.source_level, l.source_width, l.source_height, l.sub,
                               roughness_of(l.index), grads_, l.offset)
                      .dispatch(l.width, l.height);
}

} // namespace adjoint::app
