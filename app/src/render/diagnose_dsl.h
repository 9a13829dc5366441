// Per-pixel attribution of gradients for adjoint-optimize --diagnose: every read of a free value inside a
// pixel's $autodiff block adds a zero-valued local delta[slot] (marked requires_grad), so after backward
// grad(delta)[s] is that pixel's own contribution to slot s's parameter, its components summed. Nothing is
// derived by hand: the engine differentiates the same shading, vertex and antialias code the renderer runs.
#pragma once
#include "render/diagnose_stage.h"
#include "render/shading.h"

namespace adjoint::app {

// One delta per slot (render/diagnose_stage.h), and one more that takes every float no slot claims.
using DiagnoseDeltas = ArrayFloat<kDiagnoseSlots + 1>;

// All zero, then marked: call at the top level of the $autodiff block.
inline void mark_deltas(DiagnoseDeltas& d) {
    for (uint32_t s = 0; s <= kDiagnoseSlots; ++s) d[s] = 0.0f;
    requires_grad(d);
}

// The parameter buffer as the shading reads it, each float plus its slot's delta.
struct TracedParams {
    const BufferFloat& value;
    const BufferUInt& slot;   // per float of the parameter buffer: its slot, kDiagnoseSlots where none
    const DiagnoseDeltas& delta;
    Float read(const UInt& at) const { return value.read(at) + delta[slot.read(at)]; }
};

// World vertices (positions, normals or colours) as the stages read them: the value plus, per slot, its delta
// times the vertex's directional derivative d value / d the slot's parameter (components summed), which the
// vertex stage's $autodiff computed (GeometryStage::directions). Without free geometry the plain value.
struct TracedVertices {
    const BufferFloat3& value;
    const BufferFloat& directions;   // per vertex kVertexDirections * kDiagnoseSlots floats
    uint32_t which = 0;              // 0 positions, 1 normals, 2 colours
    const DiagnoseDeltas& delta;
    bool geometry = false;
    Float3 read(const UInt& v) const {
        Float3 x = value.read(v);
        if (!geometry) return x;
        for (uint32_t s = 0; s < kDiagnoseSlots; ++s) {
            UInt at = (v * kVertexDirections + 3u * which) * kDiagnoseSlots + s;
            Float3 u = make_float3(directions.read(at), directions.read(at + kDiagnoseSlots),
                                   directions.read(at + 2u * kDiagnoseSlots));
            x = x + u * delta[s];
        }
        return x;
    }
};

// A texture sample plus its texture's slot delta in every channel (samples weigh texels by weights summing to
// 1 down the mip chain, so the pixel's contribution to the texture parameter, texels and channels summed, is
// the gradient of this delta).
inline Float3 traced_sample(const BufferUInt& texture_slot, const DiagnoseDeltas& delta, const UInt& texture,
                            const Float3& sample) {
    return sample + make_float3(delta[texture_slot.read(texture)]);
}

// Slot s of the pixel at `at`: out[s * pixels + at] += grad(delta)[s]; the edge mask after the slots.
inline void add_slots(const BufferFloat& out, const DiagnoseDeltas& delta, const UInt& at, const UInt& pixels) {
    auto g = grad(delta);
    for (uint32_t s = 0; s < kDiagnoseSlots; ++s) {
        UInt i = s * pixels + at;
        out.write(i, out.read(i) + g[s]);
    }
}

} // namespace adjoint::app
