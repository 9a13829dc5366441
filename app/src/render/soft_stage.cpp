// The soft rasterization stage (SoftRas, soft_dsl.h): each pixel first lists the triangles of its tile
// within reach, then blends them by sigmoid coverage and a softmax over depth; backward, the same pixel inside
// $autodiff.
#include "render/soft_stage.h"

#include "render/shadow_dsl.h"
#include "render/soft_select_dsl.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace adjoint::app {

using gpu::kNone;

namespace {

// Entries of a pixel's list one dispatch visits, when a shaded fragment runs no loop of its own: passes 1 and 2
// (forward; pass 1 for the exact blend only) or pass 2 and its reverse (backward) each take 16,384 iterations,
// half of lavapipe's 65,535.
constexpr uint32_t kSoftPart = 16384;
// What a forward dispatch does (its `phase` argument): pass 1, pass 2, the pixel from the sums.
constexpr uint32_t kMaxPass = 1, kSumPass = 2, kFinish = 4;

// Pass 0 for the quad of pixels at 2 * dispatch_id (soft_select_dsl.h): every candidate (soft_select), or with
// faces_per_pixel (= capacity) the ones that weigh most (soft_select_held up to kSoftHeldFaces, else
// soft_select_heaviest; `key` unused otherwise).
auto select_kernel(uint32_t faces, bool held, bool clip) {
    return Kernel1D([faces, held, clip](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt tile_sides,
                                        BufferUInt tile_nearest, BufferUInt list, UInt tiles_x,
                                        BufferVar<gpu::TriSetup> setups, BufferUInt pixel_count, BufferFloat key,
                                        UInt own_base, UInt capacity, UInt own_stride, Float reach_px,
                                        BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params,
                                        BufferFloat3 positions, BufferVar<uint3> triangles, Float sigma, Float gamma,
                                        UInt width, UInt height, UInt first, UInt count) noexcept {
        TileQuad tq = tile_quad(dispatch_id().x, tiles_x);
        UInt2 corner = tq.corner;
        UInt tile_at = tq.tile;
        UInt begin = tile_offset.read(tile_at);
        SoftTile part = soft_part(SoftTile{list, begin, tile_count.read(tile_at), 1u, false}, first, count);
        UInt part_end = part.begin + part.count;
        SoftQuad q;
        q.own_stride = own_stride;
        for (uint32_t i = 0; i < kSoftQuad; ++i) {
            UInt2 pix = corner + make_uint2(i & 1u, i >> 1u);
            q.valid[i] = (pix.x < width) & (pix.y < height);
            q.at[i] = pix.y * width + pix.x;
            q.centre[i] = ite(q.valid[i], pixel_centre(pix), make_float2(-1e9f, -1e9f));
            q.n[i] = 0u;
            q.own[i] = soft_own(own_base, capacity, own_stride, tiles_x, pix);
            $if ((first > 0u) & q.valid[i]) { q.n[i] = pixel_count.read(q.at[i]); };
        }
        auto vr = views.read(view);
        // Where the kernel clips: the camera that reprojects the triangles nearer than the near plane.
        std::optional<DslCamera> cam;
        std::optional<SoftClipSource> clip_source;
        if (clip) {
            cam.emplace(camera_of(params, vr));
            clip_source.emplace(SoftClipSource{positions, triangles, *cam, vr.near});
        }
        const SoftClipSource* src = clip ? &*clip_source : nullptr;
        if (faces != 0) {
            SoftSettings st{sigma, gamma, 0.0f, vr.near, vr.far, clip};
            SoftSides sides{begin + tile_sides.read(tile_at),
                            {bit_cast<float>(tile_nearest.read(2u * tile_at)),
                             bit_cast<float>(tile_nearest.read(2u * tile_at + 1u))}};
            if (held)
                soft_select_held(setups, src, list, key, part.begin, part_end, sides, faces, reach_px, st,
                                 vr.width, q);
            else
                soft_select_heaviest(setups, src, list, key, part.begin, part_end, sides, capacity, reach_px,
                                     st, vr.width, q);
        } else {
            soft_select(setups, src, list, part.begin, part_end, capacity, reach_px, q);
        }
        for (uint32_t i = 0; i < kSoftQuad; ++i) {
            $if (q.valid[i]) { pixel_count.write(q.at[i], q.n[i]); };
        }
    });
}

// One part of the pixel's list, [first, first + count): pass 1 (kMaxPass), raising the largest log weight the
// earlier parts found (for the exact blend: `max_pass`); pass 2 (kSumPass), adding to their sums and raising the
// largest as it goes (soft_accumulate_online); the pixel from the sums (kFinish, after the last part). A list
// of one part takes them all in one dispatch.
auto forward_kernel(const ShadingPlan& groups, bool clip, bool max_pass) {
    return Kernel2D(
        [groups, clip, max_pass](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list, UInt tiles_x,
                                 BufferUInt pixel_count, UInt own_base, UInt capacity, UInt own_stride,
                                 BufferVar<gpu::ViewRec> views, UInt view, BufferFloat3 positions, BufferFloat3 normals,
                                 BufferFloat3 colors, BufferFloat2 uvs, BufferVar<uint3> triangles,
                                 BufferUInt triangle_material, BufferFloat params, TextureSetFloat3 textures,
                                 BufferVar<gpu::Material> materials, BufferVar<LightSlots> lights, BufferFloat4 out,
                                 Float3 background, Float sigma, Float gamma, Float reach2, BufferFloat grid_head,
                                 BufferUInt grid_slot, BufferUInt grid_cells, BufferUInt grid_list, BufferFloat4 sums,
                                 BufferFloat2 state, BufferUInt weighed_count, UInt first, UInt count,
                                 UInt phase) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt own_begin = soft_own(own_base, capacity, own_stride, tiles_x, pix);
        SoftTile tile = soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count, own_begin, capacity,
                                       own_stride, pix);
        SoftTile part = soft_part(tile, first, count);
        auto vr = views.read(view);
        SoftSettings st{sigma, gamma, reach2, vr.near, vr.far, clip};
        DslCamera cam = camera_of(params, vr);
        auto vin = vertex_inputs(groups, positions, normals, colors, uvs, triangles, triangle_material);
        ShadeInputs<BufferFloat> in{params, textures, materials, lights,
                                    shadow_hook(groups, positions, positions, triangles,
                                                shadow_grid_ref(groups, grid_head, grid_slot, grid_cells, grid_list),
                                                cam)};
        // The largest log weight so far: the background's before the list's first pass, else what the earlier
        // dispatches found.
        Float m = kSoftBackground / gamma;
        const uint32_t first_pass = max_pass ? kMaxPass : kSumPass;   // the list's first pass, in the first part
        $if ((first != 0u) | ((phase & first_pass) == 0u)) { m = state.read(at).x; };
        $if ((phase & kMaxPass) != 0u) { m = soft_max_log_weight(vin, cam, st, part, pix, m); };
        SoftSums s;
        $if ((phase & kSumPass) != 0u) {
            // The weighed entries to the front of the pixel's own list, or copied there from its tile's list
            // while they fit (soft_dsl.h, kSoftAllWeighed); counted on over the parts.
            UInt front = 0u;
            $if (first > 0u) {
                Float4 a = sums.read(at);
                s.weights = a.x;
                s.colors = a.yzw();
                s.uncovered = state.read(at).y;
                front = weighed_count.read(at);
            };
            auto to_front = [&](const UInt& k, const UInt& tri) {
                $if (tile.own) {
                    UInt slot = tile.entry(front);
                    $if (slot != k) {
                        list.write(k, list.read(slot));
                        list.write(slot, tri);
                    };
                }
                $elif (front < capacity) { list.write(own_begin + front * own_stride, tri); };
                front = front + 1u;
            };
            soft_accumulate_online(vin, in, groups, cam, st, part, pix, m, s, to_front);
            sums.write(at, make_float4(s.weights, s.colors));
            // An own list's count never exceeds its room.
            weighed_count.write(at, ite(((phase & kFinish) != 0u) & (front > capacity), kSoftAllWeighed, front));
        };
        state.write(at, make_float2(m, s.uncovered));
        $if ((phase & kFinish) != 0u) {
            Float3 bg = background_at(in, groups, background, [&] { return cam.ray(pixel_centre(pix)); });
            out.write(at, soft_finish(s, m, bg, st));
        };
    });
}

// One part of the pixel's list inside $autodiff. The pixel is a function of its sums over all parts
// (soft_finish), which are sums over the parts: its gradient is d pixel / d sums (from $autodiff, at the sums
// the forward pass stored) times each part's d sums / d inputs (from $autodiff, seeded with the former).
auto backward_kernel(const ShadingPlan& groups, bool camera_free, bool clip) {
    return Kernel2D([groups, camera_free, clip](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list,
                                                UInt tiles_x, BufferUInt pixel_count, UInt own_base, UInt capacity,
                                                UInt own_stride,
                                                BufferVar<gpu::ViewRec> views, UInt view,
                                                DiffBufferFloat3 positions, DiffBufferFloat3 normals,
                                                DiffBufferFloat3 colors, BufferFloat2 uvs,
                                                BufferVar<uint3> triangles, BufferUInt triangle_material,
                                                DiffBufferFloat params, BufferFloat params_value,
                                                BufferFloat3 positions_value,
                                                TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                                BufferVar<LightSlots> lights, BufferFloat dfinal,
                                                Float3 background, Float sigma, Float gamma,
                                                Float reach2, BufferFloat grid_head, BufferUInt grid_slot,
                                                BufferUInt grid_cells, BufferUInt grid_list, BufferFloat4 sums,
                                                BufferFloat2 state, BufferUInt weighed_count, UInt first,
                                                UInt count) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt own_begin = soft_own(own_base, capacity, own_stride, tiles_x, pix);
        SoftTile tile = soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count, own_begin, capacity,
                                       own_stride, pix);
        SoftTile part = soft_part(tile, first, count);
        Float4 g = read4(dfinal, 4u * at);
        $if ((part.count > 0u) & (dot(abs(g), make_float4(1.0f)) > 0.0f)) {
            auto vr = views.read(view);
            SoftSettings st{sigma, gamma, reach2, vr.near, vr.far, clip};
            DslCamera plain_cam = camera_of(params_value, vr);
            auto vin = vertex_inputs(groups, positions, normals, colors, uvs, triangles, triangle_material);
            // The background has no gradient (the loader refuses what would need one).
            ShadeInputs<BufferFloat> plain_in{params_value, textures, materials, lights};
            Float3 bg = background_at(plain_in, groups, background, [&] { return plain_cam.ray(pixel_centre(pix)); });
            Float2 ms = state.read(at);
            Float m = ms.x;
            Float4 a = sums.read(at);
            SoftSums total, seed;
            total.weights = a.x;
            total.colors = a.yzw();
            total.uncovered = ms.y;
            $autodiff {
                requires_grad(total.weights, total.colors, total.uncovered);
                adjoint::backward(dot(soft_finish(total, m, bg, st), g));
                seed.weights = grad(total.weights);
                seed.colors = grad(total.colors);
                seed.uncovered = grad(total.uncovered);
            };
            // Without a gradient for alpha only the weighed entries, at the front of the pixel's own list,
            // have one.
            UInt front = weighed_count.read(at);
            Bool front_only = (seed.uncovered == 0.0f) & (front != kSoftAllWeighed);
            SoftTile weighed = soft_part(SoftTile{list, ite(front_only, own_begin, tile.begin),
                                                  ite(front_only, front, tile.count),
                                                  ite(front_only, own_stride, tile.stride), tile.own},
                                         first, count);
            $autodiff {
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                auto blend = [&](const auto& p) {
                    ShadeInputs<std::decay_t<decltype(p)>> in{
                        p, textures, materials, lights,
                        shadow_hook(groups, positions, positions_value, triangles,
                                    shadow_grid_ref(groups, grid_head, grid_slot, grid_cells, grid_list), cam)};
                    SoftSums s;
                    soft_accumulate(vin, in, groups, cam, st, weighed, pix, m, s);
                    adjoint::backward(s.weights * seed.weights + dot(s.colors, seed.colors) +
                                      s.uncovered * seed.uncovered);
                };
                // Materials' and lights' values as constants where none is free (ShadingPlan::value_gradients).
                if (groups.value_gradients)
                    blend(params);
                else
                    blend(params_value);
            };
        };
    });
}

// The iterations a shaded fragment adds to its pixel's loop: the lights of groups too large to unroll. (Shadows
// add their candidates' loops too, which the grid's cells bound: forward() adds those.)
uint32_t fragment_loops(const ShadingPlan& groups) {
    uint32_t n = 0;
    for (const LightGroup& g : groups.lights)
        if (g.end - g.begin > kUnrolledLights) n += g.end - g.begin;
    return n;
}

} // namespace

SoftStage::SoftStage(Device& device, const ShadingPlan& groups, bool camera_free,
                     const RenderSettings& settings, uint32_t pixels, uint32_t candidates, uint32_t part,
                     bool faces_in_memory)
    : device_(device), groups_(groups), camera_free_(camera_free),
      held_(settings.soft_faces_per_pixel != 0 && settings.soft_faces_per_pixel <= kSoftHeldFaces &&
            !faces_in_memory),
      plain_(compile(settings.soft_faces_per_pixel, false)),
      sigma_(settings.soft_sigma), gamma_(settings.soft_gamma), reach2_(soft_reach2(settings.soft_sigma)),
      faces_(settings.soft_faces_per_pixel) {
    // The loader's ranges, for settings changed since (the studio's fields take any number).
    if (!(sigma_ > 0.0f && sigma_ <= 1.0f))
        throw SceneError("", "render.soft.sigma", std::string("expected ") + kSoftSigmaRange);
    if (!(gamma_ >= kSoftLeastGamma) || !std::isfinite(gamma_))
        throw SceneError("", "render.soft.gamma", std::string("expected ") + kSoftGammaRange);
    // Room for up to 256 candidates a pixel, as many as the device's largest storage buffer holds beside the tile
    // lists (Rasterizer::bin, OwnLists::fit): on lavapipe (128 MiB) 256 up to 256x256, about 120 at 512x512 and 30
    // at 1024x1024. With faces_per_pixel, room for exactly that many, in at most kSoftListRoom = 2^24 entries (the
    // loader checks the scene's views; this catches a setting or a size changed since: the studio's).
    if (faces_ && size_t(faces_) * pixels > kSoftListRoom)
        throw SceneError("", "render.soft.faces_per_pixel",
                         "expected an integer in [1, " + std::to_string(kSoftListRoom / std::max(pixels, 1u)) +
                             "] (2^24 list entries over the view's " + std::to_string(pixels) + " pixels)");
    room_ = faces_ ? faces_ : candidates ? candidates : 256;
    fit_ = !faces_ && !candidates;
    fixed_part_ = part;
    fragment_loops_ = fragment_loops(groups);
    // The selection shades nothing: its parts are kSoftPart entries. Keeping the heaviest in memory takes up to
    // 4 faces_per_pixel + 1 iterations an entry (soft_select_heaviest); in registers, one (soft_select_held).
    const uint32_t select_part = part ? part : kSoftPart;
    select_part_ = faces_ && !held_ ? std::max(std::min(select_part, kSoftPart / (kSoftQuad * faces_ + 1)), 1u)
                                    : select_part;
    key_ = device.create_buffer<float>(std::max<size_t>(size_t(faces_) * pixels, 1));
    pixel_count_ = device.create_buffer<uint32_t>(std::max(pixels, 1u));
    sums_ = device.create_buffer<float4>(std::max(pixels, 1u));
    state_ = device.create_buffer<float2>(std::max(pixels, 1u));
    weighed_count_ = device.create_buffer<uint32_t>(std::max(pixels, 1u));
}

// `clip`: with the clipping of triangles nearer than the near plane (SoftSettings::clip), named with a "_clip"
// suffix in profiles.
SoftStage::Kernels SoftStage::compile(uint32_t faces, bool clip) const {
    const std::string suffix = clip ? "_clip" : "";
    const std::string select = held_ ? "soft_select_held" : faces != 0 ? "soft_select_heaviest" : "soft_select";
    return Kernels{device_.compile(select_kernel(faces, held_, clip), {.name = select + suffix}),
                   device_.compile(forward_kernel(groups_, clip, faces == 0), {.name = "soft_forward" + suffix}),
                   device_.compile(backward_kernel(groups_, camera_free_, clip), {.name = "soft_backward" + suffix})};
}

uint32_t SoftStage::own_stride() const { return faces_ ? 1u : kOwnStride; }

void SoftStage::forward(Stream& stream, Rasterizer& raster, const DeviceGeometry& raster_geometry,
                        const StageBuffers& b, uint32_t view, const ViewCamera& camera, const Buffer<float>& params,
                        const Buffer<float4>& out, uint32_t shadow_loops) {
    // A part's entries each shade a fragment, whose loops (over lights too many to unroll, over the triangles
    // that may shadow it) count towards lavapipe's loop limit with the part's own.
    part_ = fixed_part_ ? fixed_part_ : std::max(kSoftPart / (1 + fragment_loops_ + shadow_loops), 1u);
    // The reach in pixels (NDC units are width / 2 pixels), and a slack for the rounding differences between
    // the binning's projection and the kernels' (both from the same camera values, about 1e-4 pixels apart):
    // half a pixel for the tiles, a tenth for each pixel's candidates.
    const float reach_px = std::sqrt(reach2_) * 0.5f * float(camera.width);
    bins_ = raster.bin(stream, raster_geometry, camera, reach_px + 0.5f,
                       OwnLists{soft_own_pixels(camera.width, camera.height), room_, fit_});
    // Triangles nearer than the near plane: the kernels that clip them, compiled the first time a view has some.
    if (bins_.nearer > 0 && !clipping_) clipping_.emplace(compile(faces_, true));
    clip_ = bins_.nearer > 0;
    const Kernels& k = kernels();
    const uint32_t select_parts = std::max(1u, (bins_.longest + select_part_ - 1) / select_part_);
    for (uint32_t p = 0; p < select_parts; ++p)
        stream << k.select(bins_.offset, bins_.count, bins_.sides, bins_.nearest, bins_.list, bins_.tiles_x,
                          bins_.setups, pixel_count_, key_, bins_.reserved_at, bins_.own, own_stride(),
                          reach_px + 0.1f, b.views, view, params, raster_geometry.positions,
                          raster_geometry.triangles, sigma_, gamma_, camera.width, camera.height, p * select_part_,
                          select_part_)
                      .dispatch(bins_.tiles() * kTileQuads);
    // No pixel's list is longer than its tile's (its own candidates, or the tile's whole list), nor, with
    // faces_per_pixel, than that.
    const uint32_t longest = faces_ ? std::min(bins_.longest, faces_) : bins_.longest;
    parts_ = std::max(1u, (longest + part_ - 1) / part_);
    const auto& g = b.data.geometry;
    auto pass = [&](uint32_t p, uint32_t phase) {
        stream << k.forward(bins_.offset, bins_.count, bins_.list, bins_.tiles_x, pixel_count_, bins_.reserved_at,
                           bins_.own, own_stride(), b.views, view, b.world.positions.value, b.world.normals.value,
                           b.world.colors.value, g.uvs, g.triangles, g.triangle_material, params, b.data.textures,
                           b.data.materials, b.data.lights, out, b.data.background, sigma_, gamma_, reach2_,
                           b.shadow_grid.head, b.shadow_grid.slot, b.shadow_grid.cells, b.shadow_grid.list, sums_,
                           state_, weighed_count_, p * part_, part_, phase)
                      .dispatch(camera.width, camera.height);
    };
    // Pass 1 for the exact blend only, over every part before pass 2 (soft_dsl.h, kSoftRobust).
    const uint32_t max_pass = faces_ ? 0u : kMaxPass;
    if (parts_ == 1) {
        pass(0, max_pass | kSumPass | kFinish);
        return;
    }
    if (max_pass)
        for (uint32_t p = 0; p < parts_; ++p) pass(p, kMaxPass);
    for (uint32_t p = 0; p < parts_; ++p) pass(p, kSumPass | (p + 1 == parts_ ? kFinish : 0u));
}

void SoftStage::backward(Stream& stream, const StageBuffers& b, uint32_t view, const DiffBuffer<float>& params,
                         const Buffer<float>& dfinal) const {
    const auto& g = b.data.geometry;
    const Shader<2>& backward = kernels().backward;
    for (uint32_t p = 0; p < parts_; ++p)
        stream << backward(bins_.offset, bins_.count, bins_.list, bins_.tiles_x, pixel_count_, bins_.reserved_at,
                           bins_.own, own_stride(), b.views, view, b.world.positions, b.world.normals,
                           b.world.colors, g.uvs, g.triangles, g.triangle_material, params, params.value,
                           b.world.positions.value, b.data.textures, b.data.materials, b.data.lights, dfinal,
                           b.data.background, sigma_, gamma_, reach2_, b.shadow_grid.head, b.shadow_grid.slot,
                           b.shadow_grid.cells, b.shadow_grid.list, sums_, state_, weighed_count_, p * part_, part_)
                      .dispatch(bins_.width, bins_.height);
}

} // namespace adjoint::app
