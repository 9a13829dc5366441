// The soft rasterization stage (SoftRas, soft_dsl.h): each pixel first lists the triangles of its tile
// within reach, then blends them by sigmoid coverage and a softmax over depth; backward, the same pixel inside
// $autodiff.
#include "render/soft_stage.h"

#include "render/shadow_dsl.h"

#include <algorithm>
#include <cmath>

namespace adjoint::app {

using gpu::kNone;

namespace {

auto select_kernel() {
    return Kernel2D([](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list, UInt tiles_x,
                       BufferVar<gpu::TriSetup> setups, BufferUInt pixel_count, UInt own_base, UInt capacity,
                       Float reach_px) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        UInt tile_at = tile_of(pix, tiles_x);
        UInt begin = tile_offset.read(tile_at);
        UInt end = begin + tile_count.read(tile_at);
        pixel_count.write(at, soft_select(setups, list, begin, end, own_base + at * capacity, capacity, reach_px, pix));
    });
}

auto forward_kernel(const ShadingPlan& groups) {
    return Kernel2D([groups](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list, UInt tiles_x,
                             BufferUInt pixel_count, UInt own_base, UInt capacity,
                             BufferVar<gpu::ViewRec> views, UInt view, BufferFloat3 positions,
                             BufferFloat3 normals, BufferFloat3 colors, BufferFloat2 uvs,
                             BufferVar<uint3> triangles, BufferUInt triangle_material, BufferFloat params,
                             TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                             BufferVar<LightSlots> lights, BufferFloat4 out, Float3 background, Float sigma,
                             Float gamma, Float reach2, BufferFloat grid_head, BufferUInt grid_slot,
                             BufferUInt grid_cells, BufferUInt grid_list) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        SoftTile tile = soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count, own_base, capacity, pix);
        auto vr = views.read(view);
        SoftSettings st{sigma, gamma, reach2, vr.near, vr.far};
        DslCamera cam = camera_of(params, vr);
        VertexInputs<BufferFloat3> vin{positions, normals, colors, uvs,
            triangles, triangle_material, groups.tangents};
        ShadeInputs<BufferFloat> in{params, textures, materials, lights,
                                    shadow_hook(groups, positions, positions, triangles,
                                                shadow_grid_ref(groups, grid_head, grid_slot, grid_cells, grid_list),
                                                cam)};
        Float m = soft_max_log_weight(vin, cam, st, tile, pix);
        Float3 bg = background_at(in, groups, background, [&] { return cam.ray(pixel_centre(pix)); });
        out.write(at, soft_pixel(vin, in, groups, cam, st, tile, pix, m, bg));
    });
}

// The same pixel inside $autodiff, seeded with d loss / d the pixel.
auto backward_kernel(const ShadingPlan& groups, bool camera_free) {
    return Kernel2D([groups, camera_free](BufferUInt tile_offset, BufferUInt tile_count, BufferUInt list,
                                          UInt tiles_x, BufferUInt pixel_count, UInt own_base, UInt capacity,
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
                                          BufferUInt grid_cells, BufferUInt grid_list) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        SoftTile tile = soft_triangles(list, tile_offset, tile_count, tiles_x, pixel_count, own_base, capacity, pix);
        Float4 g = read4(dfinal, 4u * at);
        $if ((tile.end > tile.begin) & (dot(abs(g), make_float4(1.0f)) > 0.0f)) {
            auto vr = views.read(view);
            SoftSettings st{sigma, gamma, reach2, vr.near, vr.far};
            DslCamera plain_cam = camera_of(params_value, vr);
            VertexInputs<DiffBufferFloat3> vin{positions, normals, colors, uvs,
                triangles, triangle_material, groups.tangents};
            Float m = soft_max_log_weight(vin, plain_cam, st, tile, pix);   // plain reads: outside $autodiff
            // The background has no gradient (the loader refuses what would need one).
            ShadeInputs<BufferFloat> plain_in{params_value, textures, materials, lights};
            Float3 bg = background_at(plain_in, groups, background, [&] { return plain_cam.ray(pixel_centre(pix)); });
            $autodiff {
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                ShadeInputs<DiffBufferFloat> in{params, textures, materials, lights,
                                                shadow_hook(groups, positions, positions_value, triangles,
                                                            shadow_grid_ref(groups, grid_head, grid_slot,
                                                                            grid_cells, grid_list),
                                                            cam)};
                adjoint::backward(dot(soft_pixel(vin, in, groups, cam, st, tile, pix, m, bg), g));
            };
        };
    });
}

} // namespace

SoftStage::SoftStage(Device& device, const ShadingPlan& groups, bool camera_free,
                     const RenderSettings& settings, uint32_t pixels, uint32_t candidates)
    : select_(device.compile(select_kernel(), {.name = "soft_select"})),
      forward_(device.compile(forward_kernel(groups), {.name = "soft_forward"})),
      backward_(device.compile(backward_kernel(groups, camera_free), {.name = "soft_backward"})),
      sigma_(settings.soft_sigma), gamma_(settings.soft_gamma), reach2_(soft_reach2(settings.soft_sigma)) {
    // Room for up to 256 candidates a pixel, in at most 2^24 entries (64 MiB, half of what a storage buffer may
    // hold on lavapipe): 256 up to 256x256, 64 at 512x512, 16 at 1024x1024.
    capacity_ = candidates ? candidates
                           : uint32_t(std::min<size_t>(256, (size_t(1) << 24) / std::max<size_t>(pixels, 1)));
    pixel_count_ = device.create_buffer<uint32_t>(std::max(pixels, 1u));
}

void SoftStage::forward(Stream& stream, Rasterizer& raster, const DeviceGeometry& raster_geometry,
                        const StageBuffers& b, uint32_t view, const ViewCamera& camera, const Buffer<float>& params,
                        const Buffer<float4>& out) {
    // The reach in pixels (NDC units are width / 2 pixels), and a slack for the rounding differences between
    // the binning's projection and the kernels' (both from the same camera values, about 1e-4 pixels apart):
    // half a pixel for the tiles, a tenth for each pixel's candidates.
    const float reach_px = std::sqrt(reach2_) * 0.5f * float(camera.width);
    const uint32_t pixels = camera.width * camera.height;
    bins_ = raster.bin(stream, raster_geometry, camera, reach_px + 0.5f, capacity_ * pixels);
    const auto& g = b.data.geometry;
    stream << select_(bins_.offset, bins_.count, bins_.list, bins_.tiles_x, bins_.setups, pixel_count_,
                      bins_.reserved_at, capacity_, reach_px + 0.1f)
                  .dispatch(camera.width, camera.height)
           << forward_(bins_.offset, bins_.count, bins_.list, bins_.tiles_x, pixel_count_, bins_.reserved_at,
                       capacity_, b.views, view, b.world.positions.value, b.world.normals.value,
                       b.world.colors.value, g.uvs, g.triangles, g.triangle_material, params, b.data.textures,
                       b.data.materials, b.data.lights, out, b.data.background, sigma_, gamma_, reach2_,
                       b.shadow_grid.head, b.shadow_grid.slot, b.shadow_grid.cells, b.shadow_grid.list)
                  .dispatch(camera.width, camera.height);
}

void SoftStage::backward(Stream& stream, const StageBuffers& b, uint32_t view, const DiffBuffer<float>& params,
                         const Buffer<float>& dfinal) const {
    const auto& g = b.data.geometry;
    stream << backward_(bins_.offset, bins_.count, bins_.list, bins_.tiles_x, pixel_count_, bins_.reserved_at,
                        capacity_, b.views, view, b.world.positions, b.world.normals, b.world.colors, g.uvs,
                        g.triangles, g.triangle_material, params, params.value, b.world.positions.value,
                        b.data.textures, b.data.materials,
                        b.data.lights, dfinal, b.data.background, sigma_, gamma_, reach2_, b.shadow_grid.head,
                        b.shadow_grid.slot, b.shadow_grid.cells, b.shadow_grid.list)
                  .dispatch(bins_.width, bins_.height);
}

} // namespace adjoint::app
