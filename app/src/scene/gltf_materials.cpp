// glTF materials as the scene's pbr materials: metallic-roughness factors and textures, normal texture, emissive.
#include "scene/gltf.h"

#include <adjoint/app/image_io.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace adjoint::app::detail::gltf {

namespace {

// The pbr model's textures replace its values (material.cpp), where glTF multiplies a texture by its factor:
// the factor is baked into the texels, so each (image, use, factors) is one scene texture, shared.
enum class Use { base_color, metallic_roughness, normal };

struct Textures {
    const tinygltf::Model& model;
    Source& source;
    Scene& scene;
    std::map<std::string, int32_t> loaded;   // key: image, use, factors

    // A texture reference's image: range-checked, its sampler's wrap and filter compared with the renderer's.
    int image_of(int texture, int texcoord, const std::string& what) {
        if (texture < 0 || size_t(texture) >= model.textures.size())
            source.fail(what + ": texture " + std::to_string(texture) + " does not exist (the file has " +
                        std::to_string(model.textures.size()) + ")");
        const tinygltf::Texture& t = model.textures[size_t(texture)];
        if (t.source < 0 || size_t(t.source) >= model.images.size())
            source.fail("texture " + std::to_string(texture) + " has no image Adjoint reads (source " +
                        std::to_string(t.source) + "; images in extensions are not read)");
        if (t.sampler >= int(model.samplers.size()))
            source.fail("texture " + std::to_string(texture) + ": sampler " + std::to_string(t.sampler) + " does not exist");
        if (t.sampler >= 0) {
            const tinygltf::Sampler& s = model.samplers[size_t(t.sampler)];
            // The renderer's textures repeat and filter bilinearly between mipmap levels (scene_data.cpp).
            for (int wrap : {s.wrapS, s.wrapT})
                if (wrap != TINYGLTF_TEXTURE_WRAP_REPEAT)
                    source.note(std::string("sampler wrap ") +
                                (wrap == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE ? "CLAMP_TO_EDGE" : "MIRRORED_REPEAT") +
                                " read as REPEAT (the renderer's textures repeat)");
            if (s.magFilter == TINYGLTF_TEXTURE_FILTER_NEAREST || s.minFilter == TINYGLTF_TEXTURE_FILTER_NEAREST ||
                s.minFilter == TINYGLTF_TEXTURE_FILTER_NEAREST_MIPMAP_NEAREST ||
                s.minFilter == TINYGLTF_TEXTURE_FILTER_LINEAR_MIPMAP_NEAREST ||
                s.minFilter == TINYGLTF_TEXTURE_FILTER_NEAREST_MIPMAP_LINEAR)
                source.note("sampler filters read as linear with linear mipmaps (the renderer's only filter)");
        }
        if (texcoord != 0) source.note("textures on texture coordinate sets other than 0 read with set 0");
        return t.source;
    }

    LinearImage decoded(int image, bool srgb) {
        std::string shown;
        const std::string bytes = image_bytes(model, image, shown, source);
        LinearImage out = decode_image(bytes, shown, source.where);
        if (!srgb) as_stored(out);   // a data texture: the values as stored, not sRGB-decoded
        return out;
    }

    int32_t add(int texture, int texcoord, Use use, std::array<float, 3> factors, const std::string& what) {
        const int image = image_of(texture, texcoord, what);
        const std::string key = std::to_string(image) + "/" + std::to_string(int(use)) + "/" +
                                std::to_string(factors[0]) + "/" + std::to_string(factors[1]) + "/" +
                                std::to_string(factors[2]);
        if (const auto found = loaded.find(key); found != loaded.end()) return found->second;
        LinearImage texels = decoded(image, use == Use::base_color);
        for (float4& t : texels.texels) {
            if (use == Use::normal) {
                // The normal texture's scale: normalize((2·texel − 1) · (scale, scale, 1)), stored back as a texel
                // (at scale 1 the texel is kept: the shading normalizes after the tangent frame anyway).
                if (factors[0] == 1.0f) break;
                const float3 n = normalize(float3((2 * t.x - 1) * factors[0], (2 * t.y - 1) * factors[0], 2 * t.z - 1));
                if (std::isfinite(n.x + n.y + n.z)) t = float4(n.x * 0.5f + 0.5f, n.y * 0.5f + 0.5f, n.z * 0.5f + 0.5f, t.w);
            } else {
                t = float4(t.x * factors[0], t.y * factors[1], t.z * factors[2], t.w);
            }
        }
        scene.textures.push_back(std::move(texels));
        return loaded[key] = int32_t(scene.textures.size() - 1);
    }
};

float factor(double value, double lo, double hi, const std::string& what, const Source& source) {
    if (!(value >= lo && value <= hi))
        source.fail(what + " is " + std::to_string(value) + ", outside [" + std::to_string(lo) + ", " +
                    (std::isinf(hi) ? std::string("inf") : std::to_string(hi)) + "]");
    return float(value);
}

void fill(const tinygltf::Material& m, int index, Material& material, Textures& textures, Source& source) {
    const std::string name = "material " + std::to_string(index);
    const tinygltf::PbrMetallicRoughness& pbr = m.pbrMetallicRoughness;
    if (pbr.baseColorFactor.size() != 4) source.fail(name + ": baseColorFactor has " +
                                                    std::to_string(pbr.baseColorFactor.size()) + " numbers (4)");
    float3 base;
    for (int c = 0; c < 3; ++c)
        base[c] = factor(pbr.baseColorFactor[size_t(c)], 0, 1, name + ": baseColorFactor", source);
    if (m.alphaMode != "OPAQUE" || pbr.baseColorFactor[3] != 1.0)
        source.note("alpha ignored (alphaMode, baseColorFactor's alpha): materials are opaque");
    const float metallic = factor(pbr.metallicFactor, 0, 1, name + ": metallicFactor", source);
    const float roughness = factor(pbr.roughnessFactor, 0, 1, name + ": roughnessFactor", source);
    if (pbr.baseColorTexture.index >= 0)
        material.texture("base_color_texture") = textures.add(pbr.baseColorTexture.index, pbr.baseColorTexture.texCoord,
                                                              Use::base_color, {base.x, base.y, base.z}, name);
    else
        std::copy_n(&base.x, 3, material.value("base_color").begin());
    if (pbr.metallicRoughnessTexture.index >= 0)   // G roughness, B metallic: the pbr model reads glTF's channels
        material.texture("metallic_roughness_texture") =
            textures.add(pbr.metallicRoughnessTexture.index, pbr.metallicRoughnessTexture.texCoord,
                         Use::metallic_roughness, {1.0f, roughness, metallic}, name);
    material.value("metallic")[0] = metallic;
    material.value("roughness")[0] = roughness;
    if (m.normalTexture.index >= 0) {
        const float scale = float(m.normalTexture.scale);
        if (!std::isfinite(scale)) source.fail(name + ": normalTexture.scale is not finite");
        material.texture("normal_texture") =
            textures.add(m.normalTexture.index, m.normalTexture.texCoord, Use::normal, {scale, 1, 1}, name);
    }
    if (m.occlusionTexture.index >= 0) source.note("occlusion textures ignored");

    if (m.emissiveFactor.size() != 3)
        source.fail(name + ": emissiveFactor has " + std::to_string(m.emissiveFactor.size()) + " numbers (3)");
    double strength = 1;   // KHR_materials_emissive_strength: the factor's multiplier
    if (const auto e = m.extensions.find("KHR_materials_emissive_strength"); e != m.extensions.end()) {
        const tinygltf::Value& v = e->second.Get("emissiveStrength");
        if (v.IsNumber()) strength = factor(v.GetNumberAsDouble(), 0, INFINITY, name + ": emissiveStrength", source);
    }
    float3 emissive;
    for (int c = 0; c < 3; ++c)
        emissive[c] = factor(m.emissiveFactor[size_t(c)], 0, 1, name + ": emissiveFactor", source) * float(strength);
    if (m.emissiveTexture.index >= 0 && length(emissive) > 0) {
        // The pbr model's emissive is one colour: the texture counts by its mean.
        const LinearImage texels = textures.decoded(textures.image_of(m.emissiveTexture.index, m.emissiveTexture.texCoord,
                                                                      name), true);
        double sum[3] = {0, 0, 0};
        for (const float4& t : texels.texels) sum[0] += t.x, sum[1] += t.y, sum[2] += t.z;
        for (int c = 0; c < 3; ++c) emissive[c] *= float(sum[c] / double(std::max<size_t>(texels.texels.size(), 1)));
        source.note("emissive textures read as their mean colour (the pbr model's emissive is one colour)");
    }
    std::copy_n(&emissive.x, 3, material.value("emissive").begin());
}

} // namespace

std::vector<int> add_materials(const tinygltf::Model& model, const std::vector<bool>& used, const Mesh& mesh,
                               Source& source, Scene& scene) {
    Textures textures{model, source, scene, {}};
    // Exporters repeat names; a name that several of the file's materials share gets `#<index>` on each.
    std::map<std::string, int> named;
    for (const tinygltf::Material& m : model.materials) ++named[m.name];
    std::vector<int> index(used.size(), -1);
    for (size_t m = 0; m < used.size(); ++m) {
        if (!used[m]) continue;
        const bool fallback = m == model.materials.size();   // primitives without a material
        const std::string& given = fallback ? std::string() : model.materials[m].name;
        const std::string label = fallback          ? std::string("default")
                                  : given.empty()   ? std::to_string(m)
                                  : named[given] > 1 ? given + "#" + std::to_string(m)
                                                     : given;
        // A made-up name can meet a given one (a material named "default", or "x#1" beside two named "x"): then
        // the index is appended (again while it still meets one).
        std::string unique = mesh.name + "/" + label;
        while (scene.find_material(unique) >= 0) unique += "#" + std::to_string(m);
        Material material = make_material(unique, "pbr");
        if (fallback) {
            // The specification's default material: white, fully metallic and rough (its factors' defaults).
            material.value("metallic")[0] = 1;
            material.value("roughness")[0] = 1;
        } else {
            fill(model.materials[m], int(m), material, textures, source);
        }
        scene.materials.push_back(std::move(material));
        index[m] = int(scene.materials.size() - 1);
    }
    return index;
}

} // namespace adjoint::app::detail::gltf
