// Light-space grids of the scene's triangles for shadows, rebuilt on the device at every render of a view:
// each shaded point tests only the triangles listed in its cell of each shadowing light's grid.
//
// A sun's grid is a uniform sun x sun grid over the plane perpendicular to its rays (bounds: the scene's
// vertices projected there), a point light's is its cube's six faces of point x point cells over the
// directions from it (gnomonic coordinates). Each triangle is listed in every cell that its footprint
// (bounding box of its projected vertices) touches once grown by the band's reach: for a sun the reach at the
// view's deepest vertex (reach grows with depth); from a point light the same over the nearest vertex's
// distance, as an angle, times the most the gnomonic map stretches an angle near a face (4.2 within 60.5
// degrees of its axis). So a cell lists every triangle whose band or inside can reach a point in it; a point
// beyond those bounds (its band wider, nearer the light than any vertex) loops over every triangle instead,
// with the same result. Built from plain positions: the grid only selects candidates, the shading's
// $autodiff differentiates the same per-triangle code as before. Count per cell (integer atomics), scan,
// read back the total (one synchronize), fill: exact, nothing overflows.
#pragma once
#include "render/stage_buffers.h"

#include <map>
#include <memory>

namespace adjoint::app {

// The grids' resolutions for a scene of `triangles` triangles.
ShadowGridShape shadow_grid_shape(uint32_t triangles);

class ShadowGrid {
public:
    ShadowGrid(Device& device, Stream& stream, const SceneData& data);
    ~ShadowGrid();
    // Every shadowing light's grid for `view`, from the world vertices in `b` and the lights and camera in
    // `params`. Synchronizes once. Refuses (SceneError naming the light) a cell whose list is too long for
    // lavapipe's loop limit.
    void build(Stream& stream, const StageBuffers& b, uint32_t view, const Buffer<float>& params);
    const ShadowGridBuffers& buffers() const { return buf_; }
    // The most triangles in one cell, per shadowing light, of the last build (for the bench and tests).
    const std::vector<uint32_t>& longest() const { return longest_; }
    // The most triangles one shaded point's shadows test, all shadowing lights together, after the last build():
    // the sum of each light's longest cell, or every triangle for each shadowing light where grids are off
    // (ADJOINT_SHADOW_GRID=0); 0 without shadows. A kernel that shades several points a thread sizes its work by it.
    uint32_t point_loops() const;

private:
    struct Kernels;
    Device& device_;
    const SceneData& data_;
    std::map<const LightModel*, std::unique_ptr<Kernels>> kernels_;
    std::unique_ptr<Kernels> scan_;
    std::vector<uint32_t> lights_;   // the shadowing lights' indices in the light buffer, by grid
    std::vector<const LightModel*> models_;   // their types
    std::vector<uint32_t> slot_host_;         // buffers().slot's values
    ShadowGridBuffers buf_;
    Buffer<uint32_t> cursor_, chunk_sum_, chunk_max_, chunk_offset_;
    size_t list_capacity_ = 1;
    std::vector<uint32_t> longest_;
    uint32_t every_triangle_ = 0;   // point_loops() where grids are off
};

} // namespace adjoint::app
