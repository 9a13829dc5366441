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

app::Camera OrbitView::camera() const {
    app::Camera c;
    c.target = target_;
    c.up = {0, 1, 0};
    c.eye = {target_.x + distance_ * std::cos(pitch_) * std::sin(yaw_), target_.y + distance_ * std::sin(pitch_),
             target_.z + distance_ * std::cos(pitch_) * std::cos(yaw_)};
    c.fov_y = fov_y_;
    c.width = c.height = size_;
    return c;
}

bool OrbitView::project(const float3& p, float& x, float& y) const {
    const app::Camera c = camera();
    auto sub = [](const float3& a, const float3& b) { return float3{a.x - b.x, a.y - b.y, a.z - b.z}; };
    auto dot = [](const float3& a, const float3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; };
    auto unit = [&](const float3& a) {
        const float l = std::sqrt(dot(a, a));
        return float3{a.x / l, a.y / l, a.z / l};
    };
    const float3 f = unit(sub(c.target, c.eye));
    const float3 side =
        unit(float3{f.y * c.up.z - f.z * c.up.y, f.z * c.up.x - f.x * c.up.z, f.x * c.up.y - f.y * c.up.x});
    const float3 up{side.y * f.z - side.z * f.y, side.z * f.x - side.x * f.z, side.x * f.y - side.y * f.x};
    const float3 d = sub(p, c.eye);
    const float z = dot(d, f);
    if (z <= 1e-4f) return false;
    const float s = 1.0f / std::tan(c.fov_y * 3.14159265f / 360.0f) / z;
    x = (dot(d, side) * s * 0.5f + 0.5f) * float(size_);
    y = (0.5f - dot(d, up) * s * 0.5f) * float(size_);
    return true;
}

void OrbitView::set_shadows_off(size_t light, bool off) {
    if (shadows_off_.size() <= light) shadows_off_.resize(light + 1, false);
    shadows_off_[light] = off;
    moved_ = true;
}

void OrbitView::render(const app::Scene& scene) {
    app::Scene s = scene;
    s.optimize.reset();   // only the picture is wanted
    app::Camera c = scene.camera;
    const app::Camera orbit = camera();
    c.target = orbit.target;
    c.up = orbit.up;
    c.eye = orbit.eye;
    c.fov_y = fov_y_;
    c.intrinsics.reset();   // a square view of the camera's vertical field of view, centred
    c.width = c.height = size_;
    s.camera = c;
    s.views = {c};
    for (size_t i = 0; i < s.lights.size(); ++i) s.lights[i].shadows = s.lights[i].shadows && !shadows_off(i);
    lights_ = scene.lights;
    app::SceneRenderer renderer(device_, s);
    renderer.render(0, image_);
    display_.picture(stream_, image_, texels_, size_ * size_);
    stream_ << synchronize();
    moved_ = false;
    ++version_;
}

} // namespace adjoint::studio
