// The phong material: Lambert + Blinn-Phong as classic OpenGL (a point light gives albedo·I·cos/r², no 1/π).
#include "scene/plugins/registry.h"

namespace adjoint::app::plugins {

namespace {

constexpr MaterialProperty phong_properties[] = {
    {"albedo", 3, {0, 0, 0}, 0, 1e30f, 0, 1, "[r, g, b] of numbers >= 0", "linear RGB", true},
    {"specular", 3, {0, 0, 0}, 0, 1e30f, 0, 1, "[r, g, b] of numbers >= 0", "linear RGB"},
    {"shininess", 1, {32, 32, 32}, 0, 1e30f, 1, 4096, "a number >= 0", "exponent"},
};
constexpr std::string_view albedo_only[] = {"albedo"};
constexpr MaterialTexture phong_textures[] = {{"albedo_texture", true, albedo_only}};

MaterialPoint evaluate(const MaterialReads& r) {
    Float3 albedo;
    $if (r.has_texture(0)) { albedo = r.texture(0); }
    $else { albedo = r.value(0); };
    return {{albedo * r.vertex_color, r.value(1), r.value(2), make_float3(0.0f)}, r.normal};
}

Float3 direct(const MaterialPoint& m, const Float3& n, const Float3& v, const LightIncoming& light) {
    const Float3& albedo = m.v[0];
    Float ndl = dot(n, light.direction);
    Float3 h = normalize(light.direction + v);
    Float spec = ite(ndl > 0.0f, pow(max(dot(n, h), 0.0f), m.v[2].x), 0.0f);
    return (albedo * max(ndl, 0.0f) + m.v[1] * spec) * light.radiance;
}

// Lambert under a sky: the albedo times the cosine-weighted irradiance over π (no specular term).
Float3 sky(const MaterialPoint& m, const Float3& n, const Float3&, const SkyLight& light) {
    return m.v[0] * light.diffuse(n);
}

Float3 emitted(const MaterialPoint&) { return make_float3(0.0f); }

} // namespace

const MaterialModel material_phong{"phong", "Lambert + Blinn-Phong (OpenGL's classic units)", phong_properties,
                                   phong_textures, evaluate, direct, sky, emitted};

} // namespace adjoint::app::plugins
