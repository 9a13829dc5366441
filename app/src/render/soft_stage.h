// The soft rasterization stage (SoftRas): every pixel lists the triangles within reach (from tile bins grown
// by the reach), then blends them by sigmoid coverage (`sigma`) and a softmax over depth (`gamma`) with the
// background; alpha is the soft silhouette (soft_dsl.h). It replaces rasterize + shade + antialias.
#pragma once
#include "render/stage_buffers.h"

#include <optional>

namespace adjoint::app {

class SoftStage {
public:
    // pixels: the views' size. candidates: room for each pixel's own list of candidates; 0: up to 256, as many
    // as the device's largest storage buffer holds beside the tile lists (each forward(): bin's OwnLists::fit).
    // A pixel with more loops over its whole tile instead, with the same result. With
    // render.soft.faces_per_pixel = K the room is K, and the pixel keeps the K candidates that weigh most
    // (`candidates` is not used; more than 2^24 entries in all throws SceneError).
    // part: the list entries a pixel visits in one dispatch; 0 chooses it from the shading (kSoftPart over
    // the iterations a shaded fragment adds); a test lowers it to force several. faces_in_memory: keep the
    // heaviest in memory even where registers would hold them (a test compares the two).
    SoftStage(Device& device, const ShadingPlan& groups, bool camera_free,
              const RenderSettings& settings, uint32_t pixels, uint32_t candidates, uint32_t part = 0,
              bool faces_in_memory = false);
    // Bins (synchronizes once: the tile lists), lists each pixel's candidates, blends; a tile list longer than
    // one part takes a dispatch per part for each pass (the blend's sums and largest weight carry over).
    // shadow_loops: the most iterations one shaded fragment's shadows take (ShadowGrid::point_loops() of this
    // view; 0 without shadows), which shortens the parts.
    void forward(Stream& stream, Rasterizer& raster, const DeviceGeometry& raster_geometry, const StageBuffers& b,
                 uint32_t view, const ViewCamera& camera, const Buffer<float>& params, const Buffer<float4>& out,
                 uint32_t shadow_loops);
    // After forward() of the same view: d loss / d the image (4 floats a pixel) -> parameters, textures,
    // world vertices.
    void backward(Stream& stream, const StageBuffers& b, uint32_t view, const DiffBuffer<float>& params,
                  const Buffer<float>& dfinal) const;

    uint32_t parts() const { return parts_; }   // dispatches a pass took in the last forward()
    // Each pixel's entries that enter its weights, at the front of its own list, of the last forward()
    // (copied there from its tile's list where its candidates overflowed; kSoftAllWeighed where they did not fit):
    // the backward pass's list without alpha gradients.
    const Buffer<uint32_t>& weighed() const { return weighed_count_; }

    // What the last forward() left, for a kernel that repeats its blend (--diagnose: render/soft_diagnose.h).
    struct Blend {
        const TileBins& bins;
        const Buffer<uint32_t>& pixel_count;
        const Buffer<float4>& sums;
        const Buffer<float2>& state;
        uint32_t capacity, own_stride, part, parts;
        float sigma, gamma, reach2;
    };
    Blend blend() const {
        return {bins_, pixel_count_, sums_, state_, bins_.own, own_stride(), part_, parts_, sigma_, gamma_, reach2_};
    }
    // Where a pixel's own list's entries lie apart (soft_own in render/soft_dsl.h): exact soft interleaves the
    // pixels of a tile, faces_per_pixel keeps each pixel's together.
    uint32_t own_stride() const;

private:
    // The kernels, without or with the clipping of triangles nearer than the near plane (SoftSettings::clip).
    struct Kernels {
        Shader<1> select;
        Shader<2> forward, backward;
    };
    Kernels compile(uint32_t faces, bool clip) const;
    const Kernels& kernels() const { return clip_ ? *clipping_ : plain_; }

    Device& device_;
    ShadingPlan groups_;
    bool camera_free_;
    bool held_;                      // faces_per_pixel's heaviest held in registers (soft_select_held)
    Kernels plain_;
    std::optional<Kernels> clipping_;   // compiled for the first view that has such triangles
    bool clip_ = false;              // the last forward() clipped (its bins had such triangles)
    float sigma_, gamma_, reach2_;   // reach2 = soft_reach2(sigma), NDC units
    uint32_t faces_ = 0;             // render.soft.faces_per_pixel (0: every triangle within reach)
    uint32_t room_ = 0;              // each pixel's own list: the room asked for (bins_.own: given, last forward())
    bool fit_ = false;               // fewer where the buffer's limit requires (OwnLists::fit)
    uint32_t fixed_part_ = 0;        // the part asked for (0: from the shading, each forward())
    uint32_t fragment_loops_ = 0;    // the iterations a shaded fragment's lights add
    uint32_t part_ = 0, select_part_ = 0;   // of the last forward(); the selection's, fixed
    Buffer<float> key_;              // faces_per_pixel: the log weights of each pixel's kept candidates
    Buffer<uint32_t> pixel_count_;   // each pixel's candidates, of the last forward()
    // Each pixel's blend of the last forward() (the backward pass differentiates the pixel at these):
    // sums: weights and weighted colours; state: the largest log weight and -log prod(1 - D'). 24 bytes a pixel.
    Buffer<float4> sums_;
    Buffer<float2> state_;
    // Each pixel's weighed entries, moved or copied to the front of its own list by the last forward() (or
    // kSoftAllWeighed): what the backward pass loops over when alpha has no gradient.
    Buffer<uint32_t> weighed_count_;
    TileBins bins_;                  // of the last forward()
    uint32_t parts_ = 1;             // dispatches a pass took in the last forward()
};

} // namespace adjoint::app
