// The pbr material: glTF 2.0 metallic-roughness (its specification's appendix B), in physical units.
#include "scene/plugins/registry.h"

#include <numbers>

namespace adjoint::app::plugins {

namespace {

constexpr float kPi = std::numbers::pi_v<float>;

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
                                            {"normal_texture", false, {}, true}};

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
        // A texel of (0.5, 0.5, 0.5) gives no direction: normalizing it was NaN, a black pixel. It keeps the
        // surface's normal, chosen before the division so that neither side of the select is NaN ($autodiff
        // forms both).
        Float3 bent = tangent * t.x + bitangent * t.y + r.normal * t.z;
        normal = normalize(ite(dot(bent, bent) > 1e-12f, bent, r.normal));
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

// A sky, as the split sum with multiple scattering (Fdez-Agüera, "A Multiple-Scattering Microfacet Model
// for Real-Time Image-based Lighting", JCGT 2019): single scattering is the sky's radiance around the lobe's
// direction blurred by the lobe times F0·A + B (the split sum's table for this very lobe: SkyLight::dfg); the
// energy single scattering loses (1 − A − B) comes back as multiple scattering lit by the irradiance; the
// diffuse base takes what the specular leaves. Under a uniform sky of 1, a white surface reflects exactly 1 at
// every roughness, metal or not (the white furnace).
Float3 sky(const MaterialPoint& m, const Float3& n, const Float3& v, const SkyLight& light) {
    Float rough = m.v[1].y;
    Float nv = max(dot(n, v), 1e-4f);
    Float3 r = n * (2.0f * dot(n, v)) - v;
    Float3 ab = light.dfg(nv, rough);
    Float scale = ab.x, bias = ab.y;
    Float3 f0 = fresnel0(m);
    Float3 single = f0 * scale + bias;
    Float ems = 1.0f - (scale + bias);
    Float3 f_avg = f0 + (1.0f - f0) * (1.0f / 21.0f);
    Float3 multiple = single * f_avg / (1.0f - f_avg * ems) * ems;
    Float3 diffuse = m.v[0] * (1.0f - m.v[1].x) * (1.0f - single - multiple);
    Float3 irradiance = light.diffuse(n);
    // The lobe of a rough surface leans from the mirror direction towards the normal: fetch along its centroid
    // (the table's lean; Lagarde and de Rousiers fit the same idea as "the dominant direction", "Moving
    // Frostbite to PBR", 2014, section 4.9.3).
    Float3 dominant = normalize(lerp(n, r, make_float3(ab.z)));
    // Blurred to the lobe's own spread, which the prefiltered maps (lobes seen along the normal) reach at
    // another roughness (the table's blur).
    Float blur = light.blur(nv, rough);
    return single * light.specular(dominant, max(blur, kMinRoughness)) + (multiple + diffuse) * irradiance;
}

Float3 emitted(const MaterialPoint& m) { return m.v[2]; }

} // namespace

const MaterialModel material_pbr{"pbr", "glTF 2.0 metallic-roughness (GGX, Smith, Schlick; physical units)",
                                 pbr_properties, pbr_textures, evaluate, direct, sky, emitted};

} // namespace adjoint::app::plugins
