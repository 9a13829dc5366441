// The panels' images on screen: studio-owned sampled VkImages filled on the GPU from engine buffers (packed
// RGBA8, see display.h) and drawn inside ImGui windows by a draw callback with a textured-quad pipeline.
// Dear ImGui 1.86's Vulkan backend draws only its font texture, so images are drawn by this pipeline between
// ImGui's commands, clipped like them.
#pragma once
#include "quad_pipeline.h"

#include <adjoint/adjoint.h>

#include <imgui.h>

#include <deque>
#include <memory>
#include <vector>

namespace adjoint::studio {

// A panel's place in the window, in window pixels: [x0, x1) x [y0, y1).
struct PanelRect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

class Textures {
public:
    using Id = size_t;

    Textures(Device& device, VkRenderPass render_pass);
    Textures(const Textures&) = delete;
    Textures& operator=(const Textures&) = delete;

    // A texture of this size; shows black until it has a source.
    Id create(uint32_t width, uint32_t height);
    // Copies `source` (width * height packed texels) into the texture in the next frame's commands. The
    // buffer must keep its contents until that frame has been submitted (the engine orders its next writes
    // after the copy: interop.h). A buffer of another size is an Error.
    void update(Id id, const Buffer<uint32_t>& source);
    // Frees every texture; the caller has waited for the frames that used them.
    void clear();
    uint32_t width(Id id) const;
    uint32_t height(Id id) const;

    // Forgets the previous UI frame's draws (a frame that was not rendered, e.g. while minimized).
    void new_ui_frame() { requests_.clear(); }
    // Records the pending copies; call before the render pass.
    void record_updates(VkCommandBuffer cmd);
    // Adds texture `id` to the current ImGui window's draw list at screen rectangle [p0, p1], showing the
    // texture's [uv0, uv1] (zoom and pan), clipped by the window.
    void draw(Id id, ImVec2 p0, ImVec2 p1, ImVec2 uv0 = {0, 0}, ImVec2 uv1 = {1, 1});
    // Renders ImGui's draw data with the images; `cmd` is inside the presenter's render pass.
    void render(ImDrawData* draw_data, VkCommandBuffer cmd);

private:
    struct Texture {
        vko::Memory memory;                // outlives the image bound to it
        vko::Image image;
        vko::ImageView view;
        VkDescriptorSet set = VK_NULL_HANDLE;   // the pool's
        uint32_t width = 0, height = 0;
        bool initialized = false;          // moved out of UNDEFINED layout
        Buffer<uint32_t> pending;          // to copy in the next frame
        bool has_pending = false;
    };
    struct DrawRequest {
        Textures* self;
        Id id;
        ImVec2 p0, p1, uv0, uv1;
    };
    static void draw_callback(const ImDrawList* list, const ImDrawCmd* cmd);
    void allocate_image(Texture& t);
    void record_copies(VkCommandBuffer cmd);

    interop::DeviceHandles h_;
    QuadPipeline pipeline_;
    vko::DescriptorPool pool_;
    std::vector<Texture> textures_;   // after the pool and pipeline: destroyed first
    std::deque<DrawRequest> requests_;     // this frame's; stable addresses for ImGui's callback data
    // While render() runs: where the callbacks draw.
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    ImVec2 display_pos_{}, framebuffer_scale_{1, 1};
    VkExtent2D framebuffer_{};
};

} // namespace adjoint::studio
