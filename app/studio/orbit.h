// The orbit view: the current scene seen from a camera the mouse turns around the scene camera's target,
// rendered by the library's SceneRenderer into a device buffer (re-rendered when the camera moves or the
// parameters change), with its lights drawn over it and their shadows switchable.
#pragma once
#include "display.h"

#include <adjoint/app/renderer.h>

#include <memory>
#include <vector>

namespace adjoint::studio {

class OrbitView {
public:
    OrbitView(Device& device, uint32_t size);
    // Starts from `scene`'s camera (yaw, pitch and distance about its target).
    void reset(const app::Scene& scene);
    void turn(float dx_pixels, float dy_pixels);   // a mouse drag
    void zoom(float wheel);                         // wheel steps; > 0 moves closer
    bool moved() const { return moved_; }
    // Renders `scene` (the current values) from the orbit camera into texels(); clears moved().
    void render(const app::Scene& scene);
    const Buffer<uint32_t>& texels() const { return texels_; }
    uint32_t size() const { return size_; }
    uint64_t version() const { return version_; }
    // The lights of the last render (their current values), for drawing over the view.
    const std::vector<app::Light>& lights() const { return lights_; }
    // Where the orbit camera sees the world point p, in the view's pixels (y down); false behind the camera.
    bool project(const float3& p, float& x, float& y) const;
    float3 target() const { return target_; }
    float distance() const { return distance_; }
    // Switches a shadowing light's shadows off (or back on) in this view only; re-renders.
    void set_shadows_off(size_t light, bool off);
    bool shadows_off(size_t light) const { return light < shadows_off_.size() && shadows_off_[light]; }

private:
    Device& device_;
    Stream stream_;
    DisplayKernels display_;
    uint32_t size_;
    Buffer<float4> image_;
    Buffer<uint32_t> texels_;
    float3 target_{};
    float yaw_ = 0, pitch_ = 0, distance_ = 1, fov_y_ = 40;
    bool moved_ = true;
    uint64_t version_ = 0;
    std::vector<app::Light> lights_;
    std::vector<bool> shadows_off_;

    app::Camera camera() const;
};

} // namespace adjoint::studio
