// The pbr material: glTF 2.0 metallic-roughness (its specification's appendix B), in physical units.
#include "scene/plugins/registry.h"

#include <numbers>

namespace adjoint::app::plugins {

namespace {

constexpr float kPi = std::numbers::pi_v<float>;
// GGX's peak grows as 1/α²: below this roughness a point light's highlight is narrower than a pixel and its
// float value overflows the gradient; the shading reads max(roughness, kMinRoughness) (the stored value is
// left alone, and a fit can still reach 0: the gradient below it is zero).
constexpr float kMinRoughness = 0.03f;

constexpr MaterialProperty pbr_properties[] = {
    {"base_color", 3, {1, 1, 1}, 0, 1e30f, 0, 1, "[r, g, b] of numbers >= 0", "linear RGB", true},
    {"metallic", 1, {0, 0, 0}, 0, 1, 0, 1, "a number in [0, 1]", "fraction"},
    {"roughness", 1, {0.5f, 0.5f, 0.5f}, 0, 1, 0, 1, "a number in [0, 1]", "fraction"},
    {"emissive", 3, {0, 0, 0}, 0, 1e30f, 0, 1e30f, "[r, g, b] of numbers >= 0", "linear RGB"},
};
constexpr std::string_view base_only[] = {"base_color"};
constexpr std::string_view metal_rough[] = {"metallic", "roughness"};
// glTF's channels: G = roughness, B = metallic, both linear; a normal texture is tangent-space, linear.
constexpr MaterialTexture pbr_textures[] = {{"base_color_texture", true, base_only},
                                            {"metallic_roughness_texture", false, metal_rough},
                                            {"normal_texture", false, {}}};

// v[0] base colour, v[1] (metallic, roughness, 0), v[2] emissive.
MaterialPoint evaluate(const MaterialReads& r) {
    Float3 base;
    $if (r.has_texture(0)) { base = r.texture(0); }
    $else { base = r.value(0); };
    Float3 metal_rough;
    $if (r.has_texture(1)) {
        Float3 t = r.texture(1);
        metal_rough = make_float3(t.z, t.y, 0.0f);
    }
    $else { metal_rough = make_float3(r.value(1).x, r.value(2).x, 0.0f); };
    // The normal texture (2·texel − 1: x along the tangent, y up the texture, z along the normal) bends the
    // normal where the UVs give a frame.
    Float3 normal = r.normal;
    $if (r.has_texture(2) && r.tangent.w != 0.0f) {
        Float3 t = r.texture(2) * 2.0f - 1.0f;
        Float3 tangent = make_float3(r.tangent.x, r.tangent.y, r.tangent.z);
        Float3 bitangent = cross(r.normal, tangent) * r.tangent.w;
        normal = normalize(tangent * t.x + bitangent * t.y + r.normal * t.z);
    };
    return {{base * r.vertex_color, metal_rough, r.value(3), make_float3(0.0f)}, normal};
}

Float3 fresnel0(const MaterialPoint& m) { return lerp(make_float3(0.04f), m.v[0], make_float3(m.v[1].x)); }

Float3 direct(const MaterialPoint& m, const Float3& n, const Float3& v, const LightIncoming& light) {
    const Float3& base = m.v[0];
    Float metallic = m.v[1].x;
    Float alpha = max(m.v[1].y, kMinRoughness);
    alpha = alpha * alpha;
    Float a2 = alpha * alpha;
    Float ndl = dot(n, light.direction);
    Float nl = max(ndl, 0.0f);
    Float nv = max(dot(n, v), 1e-4f);
    Float3 h = normalize(light.direction + v);
    Float nh = max(dot(n, h), 0.0f);
    Float vh = max(dot(v, h), 0.0f);
    Float3 f0 = fresnel0(m);
    Float3 fresnel = f0 + (1.0f - f0) * pow(1.0f - vh, 5.0f);
    Float dd = nh * nh * (a2 - 1.0f) + 1.0f;
    Float ggx = a2 / (kPi * dd * dd);
    // Height-correlated Smith, with the BRDF's 1/(4 n·l n·v) folded in.
    Float vis = 0.5f / (nl * sqrt(nv * nv * (1.0f - a2) + a2) + nv * sqrt(nl * nl * (1.0f - a2) + a2));
    Float3 diffuse = (1.0f - fresnel) * base * ((1.0f - metallic) / kPi);
    Float3 f = diffuse + fresnel * (ggx * vis);
    return ite(ndl > 0.0f, f * nl * light.radiance, make_float3(0.0f));
}

// A sky, as the split sum: diffuse c_diff·E(n)/π; specular the sky's radiance around the mirror direction
// blurred by the lobe, times (F0·A + B), with Karis's analytic fit of the split sum's (A, B) ("Physically
// Based Shading on Mobile", 2014: within a few percent of the integral).
Float3 sky(const MaterialPoint& m, const Float3& n, const Float3& v, const SkyLight& light) {
    Float rough = m.v[1].y;
    Float nv = max(dot(n, v), 1e-4f);
    Float3 r = n * (2.0f * dot(n, v)) - v;
    Float rx = rough * -1.0f + 1.0f, ry = rough * -0.0275f + 0.0425f;
    Float rz = rough * -0.572f + 1.04f, rw = rough * 0.022f - 0.04f;
    Float a004 = min(rx * rx, exp2(-9.28f * nv)) * rx + ry;
    Float scale = -1.04f * a004 + rz, bias = 1.04f * a004 + rw;
    Float3 diffuse = m.v[0] * (1.0f - m.v[1].x);
    return diffuse * light.diffuse(n) + (fresnel0(m) * scale + bias) * light.specular(r, max(rough, kMinRoughness));
}

Float3 emitted(const MaterialPoint& m) { return m.v[2]; }

} // namespace

const MaterialModel material_pbr{"pbr", "glTF 2.0 metallic-roughness (GGX, Smith, Schlick; physical units)",
                                 pbr_properties, pbr_textures, evaluate, direct, sky, emitted};

} // namespace adjoint::app::plugins
