// Shading as DSL code over the parameter buffer: texture sampling (bilinear, repeat, mipmapped by the
// UV derivatives), Lambert + Blinn-Phong with point (inverse-square), directional and ambient lights.
// The same code runs in the forward renderer (plain buffers) and inside $autodiff (differentiable
// buffers, whose reads scatter their adjoints into gradient buffers), so it is written once, as
// templates over the buffer type.
#pragma once
#include "gpu_types.h"

#include <adjoint/app/scene.h>

#include <vector>

namespace adjoint::app {

// A light as the kernels see it: its type is baked into the recorded code, its values are read from the
// parameter buffer at these offsets (floats).
struct ShadeLight {
    LightType type = LightType::ambient;
    uint32_t position = 0;    // point: position; directional: direction of travel
    uint32_t color = 0;
    uint32_t intensity = 0;
};

// The resources the shading code reads.
template <typename P>
struct ShadeInputs {
    const P& params;                        // the parameter buffer (plain or differentiable)
    const P& mips;                          // every texture's mip levels, level 0 included
    const BufferVar<gpu::Material>& materials;
    const BufferVar<gpu::Texture>& textures;
    const BufferVar<gpu::MipLevel>& levels;
};

template <typename P>
Float3 read3(const P& buf, const UInt& at) {
    return make_float3(buf.read(at), buf.read(at + 1u), buf.read(at + 2u));
}

template <typename P>
Float3 texel(const P& mips, const Expr<gpu::MipLevel>& lv, const UInt& x, const UInt& y) {
    return read3(mips, lv.offset + (y * lv.width + x) * 3u);
}

// Bilinear filtering with repeat wrapping; texel centres at half-integers.
template <typename P>
Float3 bilinear(const P& mips, const Expr<gpu::MipLevel>& lv, const Float2& uv) {
    Float2 size = make_float2(cast<float>(lv.width), cast<float>(lv.height));
    Float2 p = fract(uv) * size - 0.5f;
    Float2 f = floor(p);
    Float2 t = p - f;
    // f is in [-1, size - 1]: adding the size once makes it non-negative for the unsigned wrap.
    UInt x0 = cast<uint32_t>(f.x + size.x) % lv.width, y0 = cast<uint32_t>(f.y + size.y) % lv.height;
    UInt x1 = (x0 + 1u) % lv.width, y1 = (y0 + 1u) % lv.height;
    Float3 a = lerp(texel(mips, lv, x0, y0), texel(mips, lv, x1, y0), make_float3(t.x));
    Float3 b = lerp(texel(mips, lv, x0, y1), texel(mips, lv, x1, y1), make_float3(t.x));
    return lerp(a, b, make_float3(t.y));
}

// Trilinear sampling; the level of detail comes from the surface's UV derivatives (a constant for the
// gradient: it depends on geometry only). Magnified pixels read level 0 alone.
template <typename P>
Float3 sample_texture(const ShadeInputs<P>& in, const UInt& texture, const Expr<gpu::Surface>& s) {
    auto tex = in.textures.read(texture);
    auto base = in.levels.read(tex.first_level);
    Float2 size = make_float2(cast<float>(base.width), cast<float>(base.height));
    Float rho = max(length(s.duv_dx * size), length(s.duv_dy * size));
    Float lod = clamp(log2(max(rho, 1e-8f)), 0.0f, cast<float>(tex.levels - 1u));
    UInt l0 = cast<uint32_t>(floor(lod));
    Float frac = lod - floor(lod);
    Float3 c = bilinear(in.mips, in.levels.read(tex.first_level + l0), s.uv);
    $if (frac > 0.0f) {
        Float3 c1 = bilinear(in.mips, in.levels.read(tex.first_level + l0 + 1u), s.uv);
        c = lerp(c, c1, make_float3(frac));
    };
    return c;
}

// The colour of a surface point seen from eye.
template <typename P>
Float3 shade_surface(const ShadeInputs<P>& in, const std::vector<ShadeLight>& lights, const Expr<gpu::Surface>& s,
             const Float3& eye) {
    auto mat = in.materials.read(s.material);
    Float3 albedo;
    $if (mat.texture != gpu::kNone) { albedo = sample_texture(in, mat.texture, s); }
    $else { albedo = read3(in.params, mat.albedo); };
    albedo = albedo * s.color;
    Float3 specular = read3(in.params, mat.specular);
    Float shininess = in.params.read(mat.shininess);
    Float3 v = normalize(eye - s.position);
    Float3 color = make_float3(0.0f);
    for (const ShadeLight& L : lights) {
        Float3 radiance = read3(in.params, L.color) * in.params.read(L.intensity);
        if (L.type == LightType::ambient) {
            color = color + albedo * radiance;
            continue;
        }
        Float3 l;
        Float atten = 1.0f;
        if (L.type == LightType::point) {
            Float3 d = read3(in.params, L.position) - s.position;
            Float dist2 = dot(d, d);
            l = d * rsqrt(dist2);
            atten = 1.0f / dist2;
        } else {
            l = -normalize(read3(in.params, L.position));
        }
        Float ndl = dot(s.normal, l);
        Float3 h = normalize(l + v);
        Float spec = ite(ndl > 0.0f, pow(max(dot(s.normal, h), 0.0f), shininess), 0.0f);
        color = color + (albedo * max(ndl, 0.0f) + specular * spec) * radiance * atten;
    }
    return color;
}

} // namespace adjoint::app
