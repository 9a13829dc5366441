// adjoint-optimize --diagnose with soft visibility: SoftStage's backward kernel again, with every free value traced
// per pixel (render/diagnose_dsl.h), so each pixel writes its own contribution to up to kDiagnoseSlots parameters'
// gradients, and the pixels whose soft coverage carries a visibility gradient (the edge mask, below).
#pragma once
#include "render/diagnose_stage.h"
#include "render/soft_stage.h"

namespace adjoint::app {

// The edge mask of soft visibility. Coverage carries a visibility gradient where it can still change: a triangle
// within reach of the pixel but not covering it wholly moves the pixel's colour, as its outline moves, in
// proportion to its share of the blend and to 1 - D' (d w / d logit = w (1 - D) for D well above the cutoff).
// Inside a mesh, the triangles on both sides of a shared edge trade that weight between them (equal colours at
// the edge: no gradient), so only fragments whose outline edge nearest to the pixel is a silhouette edge count,
// told as the antialias walk tells one (antialias_dsl.h): no neighbour across it, or the neighbour folded
// behind it (one faces the camera, the other away). A pixel is marked where
//     sum over those fragments of share_j * (1 - D'_j)       (share_j = w_j / all the blend's weights)
// is above kSoftEdgeShare: the ring along a mesh's outline, over the background or over a surface behind, not
// its inside (wholly covered, or only inner edges near) nor a surface behind it that the depth softmax blends.
constexpr float kSoftEdgeShare = 0.01f;

class SoftDiagnoseStage {
public:
    // geometry: the kernel traces the world vertices (DiagnoseBuffers::geometry must match).
    SoftDiagnoseStage(Device& device, const ShadingPlan& groups, bool geometry);
    // After soft.forward() of the same view and with dfinal final: each pixel's contributions into d.out (its
    // parts of the list added up, one dispatch a part as the backward pass takes them) and the edge mask.
    void run(Stream& stream, const StageBuffers& b, uint32_t view, const SoftStage& soft, const Buffer<float>& params,
             const Buffer<float>& dfinal, const DiagnoseBuffers& d) const;

private:
    Shader<2> shader_;

public:
    const bool geometry;
};

} // namespace adjoint::app
