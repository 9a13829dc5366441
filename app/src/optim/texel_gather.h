// The static chain's texel gradients gathered, not scattered. Its geometry does not move, so the texels each covered
// pixel's material texture samples read, and their filter weights, are the same every iteration: they are found
// once per view (a kernel holds the samples' texel reads, HeldTexels) and listed by texel on the host. Each
// iteration shade_loss_backward writes d loss / d sample per pixel and sample (the samples read detached: no texel
// atomics), and one thread per run of a texel's list adds weight * d loss / d sample over it into the texture
// set's gradient: an atomic a float a run, where each pixel added 24 (8 taps of 3 floats), a compare-and-swap each
// on lavapipe and 2/3 of shade_loss_backward at 5k/256x256 with a 128x128 texture free.
#pragma once
#include "render/raster.h"
#include "render/scene_data.h"

#include <vector>

namespace adjoint::app {

class TexelGather {
public:
    // Whether the static chain of a scene with this plan gathers: a material texture is free and no light's map
    // is (a map's samples are not material samples; its texels keep their atomics).
    static bool applies(const ShadingPlan& plan);

    TexelGather(Device& device, const ShadingPlan& plan);
    uint32_t samples() const { return samples_; }   // the material texture samples a pixel's shading records

    // View `view`'s lists (in view order, once each): the taps of its `count` covered pixels' samples, read
    // through surfaces at the values `params` (a sample's texels and weights depend on the surface only).
    void add_view(Stream& stream, const SceneData& data, uint32_t view, const SurfaceBuffers& surfaces,
                  const Buffer<uint32_t>& covered, uint32_t count, const Buffer<float>& params);
    // d loss / d sample for count * samples() entries (entry e's sample j at e * samples() + j), as
    // shade_loss_backward writes it for the view being gathered.
    const Buffer<float4>& dsample() const { return dsample_; }
    // View `view`'s texels' gradients, from dsample(), added into `texel_grad` (the texture set's gradient).
    void gather(Stream& stream, uint32_t view, const Buffer<float>& texel_grad) const;

private:
    struct View {
        Buffer<uint4> runs;      // per run: the texel's first float, [begin, end) in records
        Buffer<uint2> records;   // per record: its dsample entry, its weight's bits
        uint32_t run_count = 0;
    };
    Device& device_;
    int used_ = 0;   // the texel reads the taps kernel recorded (set while it compiles)
    Shader<1> taps_, gather_;
    uint32_t samples_ = 0;
    std::vector<View> views_;
    Buffer<float4> dsample_;
};

} // namespace adjoint::app
