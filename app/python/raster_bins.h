// Tile lists for adjoint.torch's rasterize: each tile of each image lists the triangles whose projected bounds
// meet it, so that a pixel tests those rather than every triangle of the mesh.
#pragma once
#include "runtime.h"

namespace adjoint::python {

struct TriangleBins {
    uint32_t tile = 8;                     // pixels a side
    uint32_t tiles_x = 0, tiles_y = 0;     // an image's
    uint32_t longest = 0;                  // the longest list's length
    // Per tile of each image (b * tiles_x * tiles_y + ty * tiles_x + tx): where its list begins in `list`, and
    // its length. A list holds triangle indices in no particular order.
    Buffer<uint32_t> offset, count, list;
};

// Bins the triangles `tri` ([triangles, 3] vertex indices) of every image of `pos` ([batch, vertices] clip-space
// positions) at width x height, on `stream` (which it synchronizes once, to size the lists).
TriangleBins bin_triangles(Runtime& rt, Stream& stream, const Buffer<float4>& pos, const Buffer<uint32_t>& tri,
                           uint32_t batch, uint32_t vertices, uint32_t triangles, uint32_t width, uint32_t height);

} // namespace adjoint::python
