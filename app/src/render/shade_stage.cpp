// The shading stage of the dynamic renderer: each covered pixel's surface recomputed from the world vertices (so
// that $autodiff sees it move with them) and shaded; backward, the same code inside $autodiff. Both run over the
// rasterizer's list of covered pixels (render/work_list.h); a per-pixel pass writes the background.
#include "render/shade_stage.h"

#include "render/geometry_dsl.h"
#include "render/shadow_dsl.h"
#include "render/work_list.h"

#include <vector>

namespace adjoint::app {

using gpu::kNone;

namespace {

// The background where no triangle covers the pixel (the covered pixels are the list's: forward_kernel).
auto background_kernel(const ShadingPlan& groups) {
    return Kernel2D([groups](BufferUInt tri_ids, BufferVar<gpu::ViewRec> views, UInt view, BufferFloat params,
                             TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                             BufferVar<LightSlots> lights, BufferFloat4 out, Float3 background) noexcept {
        UInt2 pix = dispatch_id().xy();
        UInt at = pix.y * dispatch_size().x + pix.x;
        $if (tri_ids.read(at) == kNone) {
            DslCamera cam = camera_of(params, views.read(view));
            ShadeInputs<BufferFloat> in{params, textures, materials, lights};
            out.write(at, make_float4(background_at(in, groups, background, [&] { return cam.ray(pixel_centre(pix)); }),
                                      0.0f));
        };
    });
}

// Each covered pixel (the rasterizer's list, render/work_list.h) shaded.
auto forward_kernel(const ShadingPlan& groups) {
    return Kernel1D([groups](BufferUInt covered, BufferUInt covered_count, UInt width, BufferUInt tri_ids,
                             BufferVar<gpu::ViewRec> views, UInt view,
                             BufferFloat3 positions, BufferFloat3 normals, BufferFloat3 colors,
                             BufferFloat2 uvs, BufferVar<uint3> triangles, BufferUInt triangle_material,
                             BufferFloat params, TextureSetFloat3 textures,
                             BufferVar<gpu::Material> materials, BufferVar<LightSlots> lights,
                             BufferFloat4 out, BufferFloat grid_head, BufferUInt grid_slot,
                             BufferUInt grid_cells, BufferUInt grid_list) noexcept {
        DslCamera cam = camera_of(params, views.read(view));
        for_each_listed(covered, covered_count, 0, [&](const UInt& at) {
            UInt2 pix = make_uint2(at % width, at / width);
            UInt tri = tri_ids.read(at);
            ShadeInputs<BufferFloat> in{params, textures, materials, lights,
                                        shadow_hook(groups, positions, positions, triangles,
                                                    shadow_grid_ref(groups, grid_head, grid_slot, grid_cells, grid_list),
                                                    cam)};
            auto vin = vertex_inputs(groups, positions, normals, colors, uvs, triangles, triangle_material);
            auto s = surface_at(vin, cam, tri, pix);
            out.write(at, make_float4(shade_surface(in, groups, s.load(), cam.eye), 1.0f));
        });
    });
}

// Seeded with d loss / d the shaded colour (4 floats a pixel).
auto backward_kernel(const ShadingPlan& groups, bool camera_free, bool share) {
    return Kernel1D([groups, camera_free, share](BufferUInt covered, BufferUInt covered_count, UInt width,
                                          BufferUInt tri_ids, BufferVar<gpu::ViewRec> views, UInt view,
                                          DiffBufferFloat3 positions, DiffBufferFloat3 normals,
                                          DiffBufferFloat3 colors, BufferFloat2 uvs,
                                          BufferVar<uint3> triangles, BufferUInt triangle_material,
                                          DiffBufferFloat params, BufferFloat params_value,
                                          BufferFloat3 positions_value,
                                          TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                          BufferVar<LightSlots> lights, BufferFloat color_grad, BufferFloat color_share,
                                          BufferFloat grid_head, BufferUInt grid_slot, BufferUInt grid_cells,
                                          BufferUInt grid_list) noexcept {
        // A fixed camera once a thread, not once a pixel (its matrix takes 11 reads and a tangent).
        auto vr = views.read(view);
        DslCamera plain_cam = camera_of(params_value, vr);
        for_each_listed(covered, covered_count, 0, [&](const UInt& at) {
            UInt2 pix = make_uint2(at % width, at / width);
            UInt tri = tri_ids.read(at);
            Float3 g = read3(color_grad, 4u * at);
            if (share) g = g + read3(color_share, 4u * at);
            $autodiff {
                DslCamera cam = camera_free ? camera_of(params, vr) : plain_cam;
                auto vin = vertex_inputs(groups, positions, normals, colors, uvs, triangles, triangle_material);
                auto s = surface_at(vin, cam, tri, pix);
                auto shade = [&](const auto& p) {
                    ShadeInputs<std::decay_t<decltype(p)>> in{
                        p, textures, materials, lights,
                        shadow_hook(groups, positions, positions_value, triangles,
                                    shadow_grid_ref(groups, grid_head, grid_slot, grid_cells, grid_list), cam)};
                    adjoint::backward(dot(shade_surface(in, groups, s.load(), cam.eye), g));
                };
                // Materials' and lights' values as constants where none is free (ShadingPlan::value_gradients).
                if (groups.value_gradients)
                    shade(params);
                else
                    shade(params_value);
            };
        });
    });
}

} // namespace

ShadeStage::ShadeStage(Device& device, const ShadingPlan& groups, bool camera_free, bool blend_share)
    : plain_background_(!groups.background),
      background_(plain_background_ ? std::nullopt
                                    : std::optional(device.compile(background_kernel(groups),
                                                                   {.name = "dynamic_shade_background"}))),
      forward_(device.compile(forward_kernel(groups), {.name = "dynamic_shade_forward"})),
      backward_(device.compile(backward_kernel(groups, camera_free, blend_share), {.name = "dynamic_shade_backward"})),
      blend_share_(blend_share),
      // A shadowing light's test loops over a grid cell of up to the loop budget's triangles for one pixel
      // (render/shadow_grid.cpp): then one pixel a thread.
      stride_(groups.shadow.any ? 1 : kListStride), device_(device) {}

void ShadeStage::forward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gb,
                         const Buffer<float>& params, const Buffer<float4>& out) const {
    const auto& g = b.data.geometry;
    const size_t pixels = size_t(gb.width) * gb.height;
    const float3 c = b.data.background;
    if (!plain_background_) {
        stream << (*background_)(gb.triangle, b.views, view, params, b.data.textures, b.data.materials, b.data.lights,
                              out, c)
                      .dispatch(gb.width, gb.height);
    } else {
        if (plain_.size() != pixels || plain_color_.x != c.x || plain_color_.y != c.y || plain_color_.z != c.z) {
            plain_ = device_.create_buffer<float4>(pixels);
            plain_color_ = c;
            stream << plain_.copy_from(std::vector<float4>(pixels, float4(c.x, c.y, c.z, 0.0f)).data());
        }
        stream << plain_.copy_to(out, 0, 0, pixels);
    }
    stream << forward_(gb.covered, gb.covered_count, gb.width, gb.triangle, b.views, view, b.world.positions.value,
                       b.world.normals.value, b.world.colors.value, g.uvs, g.triangles, g.triangle_material, params,
                       b.data.textures, b.data.materials, b.data.lights, out, b.shadow_grid.head,
                       b.shadow_grid.slot, b.shadow_grid.cells, b.shadow_grid.list)
                  .dispatch(list_threads(size_t(gb.width) * gb.height, stride_));
}

void ShadeStage::backward(Stream& stream, const StageBuffers& b, uint32_t view, const GBuffer& gb,
                          const DiffBuffer<float>& params, const Buffer<float>& color_grad,
                          const Buffer<float>* share) const {
    if (blend_share_ != (share != nullptr))
        fail("ShadeStage::backward: ", blend_share_ ? "this stage adds the blends' share of the colour gradient, "
                                                      "and none was given"
                                                    : "a share of the colour gradient was given to a stage made "
                                                      "without blend_share");
    const auto& g = b.data.geometry;
    stream << backward_(gb.covered, gb.covered_count, gb.width, gb.triangle, b.views, view, b.world.positions,
                        b.world.normals, b.world.colors, g.uvs, g.triangles, g.triangle_material, params,
                        params.value, b.world.positions.value, b.data.textures, b.data.materials, b.data.lights,
                        color_grad, share ? *share : color_grad, b.shadow_grid.head, b.shadow_grid.slot, b.shadow_grid.cells, b.shadow_grid.list)
                  .dispatch(list_threads(size_t(gb.width) * gb.height, stride_));
}

} // namespace adjoint::app
