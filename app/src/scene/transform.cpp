// Mesh placement: quaternions, the model and normal matrices, and the loader's small vector helpers.
#include "scene/loading.h"
#include <cmath>
#include <numbers>

namespace adjoint::app {

namespace detail {
float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
float3 cross(float3 a, float3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
float length(float3 a) { return std::sqrt(dot(a, a)); }
float3 normalize(float3 a) {
    const float l = length(a);
    return l > 0 ? a * (1.0f / l) : a;
}
float3 operator-(float3 a, float3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
float3 operator+(float3 a, float3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
float3 operator*(float3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }

void BoundingBox::add(const std::vector<float3>& points, const float4x4* placement) {
    for (const float3& p : points)
        for (size_t r = 0; r < 3; ++r) {
            const float w = placement ? transformed(*placement, p, r) : p[r];
            lo[r] = std::fmin(lo[r], w);
            hi[r] = std::fmax(hi[r], w);
        }
}
float BoundingBox::radius() const { return empty() ? 0.0f : 0.5f * length(hi - lo); }

Quaternion read_rotation(const JsonValue& value) {
    const char* shape = "expected {\"axis\": [x, y, z], \"angle\": degrees} or {\"quaternion\": [w, x, y, z]}";
    if (!value.json().is_object()) value.fail(shape);
    if (value.has("quaternion")) {
        value.expect_object({"quaternion"});
        const JsonValue q = value.require("quaternion");
        const char* q_shape = "expected [w, x, y, z] of numbers, not all zero";
        if (!q.json().is_array() || q.array_size() != 4) q.fail(q_shape);
        float c[4];
        double norm = 0;
        for (size_t i = 0; i < 4; ++i) {
            if (!q[i].json().is_number()) q.fail(q_shape);
            c[i] = q[i].number();
            norm += static_cast<double>(c[i]) * c[i];
        }
        if (!(norm > 0)) q.fail(q_shape);
        const float inv = static_cast<float>(1.0 / std::sqrt(norm));
        return {c[0] * inv, c[1] * inv, c[2] * inv, c[3] * inv};
    }
    value.expect_object({"axis", "angle", "quaternion"});
    if (!value.has("axis") && !value.has("angle")) value.fail(shape);
    const JsonValue axis = value.require("axis");
    const float3 a = axis.vec3();
    if (length(a) == 0) axis.fail("expected a non-zero axis");
    return quaternion_from_axis_angle(a, value.require("angle").number());
}

float3 read_scale(const JsonValue& value) {
    const char* shape = "expected a non-zero number or [x, y, z] of non-zero numbers";
    if (value.json().is_number()) {
        const float s = value.number();
        if (s == 0) value.fail(shape);
        return float3(s);
    }
    if (!value.json().is_array() || value.array_size() != 3) value.fail(shape);
    float3 s;
    for (size_t i = 0; i < 3; ++i) {
        if (!value[i].json().is_number()) value.fail(shape);
        s[i] = value[i].number();
        if (s[i] == 0) value.fail(shape);
    }
    return s;
}
} // namespace detail

Quaternion quaternion_from_axis_angle(float3 axis, float degrees) {
    const float3 a = detail::normalize(axis);
    const double half = 0.5 * static_cast<double>(degrees) * std::numbers::pi / 180.0;
    const float s = static_cast<float>(std::sin(half));
    return {static_cast<float>(std::cos(half)), a.x * s, a.y * s, a.z * s};
}

float3x3 rotation_matrix(const Quaternion& q) {
    const float w = q.w, x = q.x, y = q.y, z = q.z;
    float3x3 m;
    // Column-major: m[c][r].
    m[0] = float3(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y));
    m[1] = float3(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x));
    m[2] = float3(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y));
    return m;
}

float4x4 model_matrix(const Transform& t) {
    const float3x3 r = rotation_matrix(t.rotation);
    float4x4 m = float4x4::identity();
    for (size_t c = 0; c < 3; ++c)
        for (size_t row = 0; row < 3; ++row) m[c][row] = r[c][row] * t.scale[c];
    m[3] = float4(t.translation.x, t.translation.y, t.translation.z, 1);
    return m;
}

float3x3 normal_matrix(const Transform& t) {
    // (R S)^-T = R S^-1 for a rotation R and a diagonal S.
    float3x3 m = rotation_matrix(t.rotation);
    for (size_t c = 0; c < 3; ++c)
        for (size_t row = 0; row < 3; ++row) m[c][row] /= t.scale[c];
    return m;
}

} // namespace adjoint::app
