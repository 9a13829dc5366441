// The orbit camera and its renders.
#include "orbit.h"

#include <algorithm>
#include <cmath>

namespace adjoint::studio {

OrbitView::OrbitView(Device& device, uint32_t size)
    : device_(device), stream_(device.create_stream()), display_(device), size_(size),
      image_(device.create_buffer<float4>(size_t(size) * size)),
      texels_(device.create_buffer<uint32_t>(size_t(size) * size)) {}

void OrbitView::reset(const app::Scene& scene) {
    const app::Camera& c = scene.camera;
    target_ = c.target;
    float3 d{c.eye.x - c.target.x, c.eye.y - c.target.y, c.eye.z - c.target.z};
    distance_ = std::max(std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z), 1e-3f);
    yaw_ = std::atan2(d.x, d.z);
    pitch_ = std::asin(std::clamp(d.y / distance_, -1.0f, 1.0f));
    fov_y_ = c.fov_y;
    moved_ = true;
}

void OrbitView::turn(float dx, float dy) {
    yaw_ -= dx * 0.01f;
    pitch_ = std::clamp(pitch_ + dy * 0.01f, -1.5f, 1.5f);
    moved_ = true;
}

void OrbitView::zoom(float wheel) {
    distance_ = std::clamp(distance_ * std::pow(0.9f, wheel), 1e-2f, 1e4f);
    moved_ = true;
}

void OrbitView::render(const app::Scene& scene) {
    app::Scene s = scene;
    s.optimize.reset();   // only the picture is wanted
    app::Camera c = scene.camera;
    c.target = target_;
    c.up = {0, 1, 0};
    c.eye = {target_.x + distance_ * std::cos(pitch_) * std::sin(yaw_), target_.y + distance_ * std::sin(pitch_),
             target_.z + distance_ * std::cos(pitch_) * std::cos(yaw_)};
    c.fov_y = fov_y_;
    c.intrinsics.reset();   // a square view of the camera's vertical field of view, centred
    c.width = c.height = size_;
    s.camera = c;
    s.views = {c};
    app::SceneRenderer renderer(device_, s);
    renderer.render(0, image_);
    display_.picture(stream_, image_, texels_, size_ * size_);
    stream_ << synchronize();
    moved_ = false;
    ++version_;
}

} // namespace adjoint::studio
