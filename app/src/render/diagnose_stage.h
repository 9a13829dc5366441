// adjoint-optimize --diagnose on the dynamic chain: the shading and antialias stages' backward kernels again,
// with every free value traced per pixel (render/diagnose_dsl.h), so each pixel writes its own contribution to
// up to kDiagnoseSlots parameters' gradients, and the pixels whose pairs blend a silhouette edge.
#pragma once
#include "render/stage_buffers.h"

#include <optional>

namespace adjoint::app {

// Parameters one diagnose pass attributes (a larger selection runs in several passes).
constexpr uint32_t kDiagnoseSlots = 8;
// The floats per vertex of DiagnoseBuffers::directions: d (position, normal, colour) / d slot s's parameter.
constexpr uint32_t kVertexDirections = 9;

struct DiagnoseBuffers {
    Buffer<uint32_t> param_slot;     // per float of the parameter buffer: its slot, kDiagnoseSlots where none
    Buffer<uint32_t> texture_slot;   // per texture of the set: the slot of the parameter its level 0 is
    Buffer<float> directions;        // per world vertex kVertexDirections * kDiagnoseSlots (geometry only)
    Buffer<float> out;               // (kDiagnoseSlots + 1) * pixels: slot s's image, then the edge mask
    bool geometry = false;           // a slot is a geometry parameter: vertex reads are traced
};

class DiagnoseStage {
public:
    // geometry: the kernels trace the world vertices (DiagnoseBuffers::geometry must match).
    DiagnoseStage(Device& device, const ShadingPlan& groups, bool antialias, bool geometry);
    // After antialiasing's backward (color_grad: the blends' share of the shading's colour gradient, which is
    // dfinal plus it; without antialiasing color_grad is the whole and dfinal the same buffer): each covered
    // pixel's contributions into out (written), then each antialiased pixel pair's (added) and the edge mask.
    // unblended: with antialiasing, the shaded image before its blends (the pairs' colours); else unused.
    void run(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gbuffer, const Buffer<float>& params,
             const Buffer<float>& color_grad, const Buffer<float4>* unblended, const Buffer<float>& dfinal,
             const DiagnoseBuffers& d) const;

private:
    Shader<2> shade_;
    std::optional<Shader<2>> antialias_;

public:
    const bool geometry;
};

} // namespace adjoint::app
