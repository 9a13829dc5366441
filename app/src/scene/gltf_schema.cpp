// The glTF 2.0 schema's types, checked on the raw JSON for the members Adjoint reads, before tinygltf parses.
#include "scene/gltf.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace adjoint::app::detail::gltf {

namespace {

// tinygltf 2.7 has no strict mode: a member of the wrong type reads as absent (a material's
// pbrMetallicRoughness as an array: a white material; a texture index of -1: no texture), so the file would
// render wrong without a word. Every member that reaches the mesh or its materials is checked here instead.
enum class Type { object, array, string, number, integer, boolean };

const char* expected(Type type) {
    switch (type) {
    case Type::object: return "expected an object";
    case Type::array: return "expected an array";
    case Type::string: return "expected a string";
    case Type::number: return "expected a number";
    case Type::integer: return "expected an integer >= 0";
    default: return "expected true or false";
    }
}

bool is(const Json& v, Type type) {
    switch (type) {
    case Type::object: return v.is_object();
    case Type::array: return v.is_array();
    case Type::string: return v.is_string();
    case Type::number: return v.is_number();
    // Indices, counts, offsets and enums: tinygltf reads only JSON integers (1.0 reads as absent) into an int.
    case Type::integer:
        return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    default: return v.is_boolean();
    }
}

struct Checker {
    const Source& source;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        source.fail(path + ": " + what);
    }
    void expect(const Json& v, Type type, const std::string& path) const {
        if (!is(v, type)) fail(path, expected(type));
        // tinygltf casts integers to int: a larger one would wrap into another index (files are at most 1 GiB,
        // so no valid offset, length or count is that large).
        if (type == Type::integer && v.get<uint64_t>() > uint64_t(INT32_MAX))
            fail(path, "is over 2147483647 (the largest integer glTF members are read as)");
    }
    // obj[key] when present (checked to be `type`), else null; a missing required member is an error.
    const Json* member(const Json& obj, const std::string& path, const char* key, Type type,
                       bool required = false) const {
        const auto found = obj.find(key);
        if (found == obj.end()) {
            if (required) fail(child_path(path, key), "required key is missing");
            return nullptr;
        }
        expect(*found, type, child_path(path, key));
        return &*found;
    }
    // A glTF object: every one may have a name and extensions, each extension's value an object.
    const Json& object(const Json& v, const std::string& path) const {
        expect(v, Type::object, path);
        member(v, path, "name", Type::string);
        if (const Json* extensions = member(v, path, "extensions", Type::object))
            for (const auto& [name, e] : extensions->items())
                expect(e, Type::object, child_path(child_path(path, "extensions"), name));
        return v;
    }
    // obj[key], when present, as an array of `type` (objects checked as glTF objects).
    template <typename Each>
    void each(const Json& obj, const std::string& path, const char* key, Type type, Each&& check) const {
        const Json* list = member(obj, path, key, Type::array);
        if (!list) return;
        for (size_t i = 0; i < list->size(); ++i) {
            const std::string at = index_path(child_path(path, key), i);
            if (type == Type::object) check(object((*list)[i], at), at);
            else expect((*list)[i], type, at);
        }
    }
    void values(const Json& obj, const std::string& path, const char* key, Type type) const {
        each(obj, path, key, type, [](const Json&, const std::string&) {});
    }
    void members(const Json& obj, const std::string& path, std::initializer_list<const char*> keys, Type type) const {
        for (const char* key : keys) member(obj, path, key, type);
    }

    // A textureInfo (baseColorTexture, normalTexture, ...): the other members before the required index, so a
    // wrong scale is named as such.
    void texture_info(const Json& material, const std::string& path, const char* key) const {
        const Json* info = member(material, path, key, Type::object);
        if (!info) return;
        const std::string at = child_path(path, key);
        object(*info, at);
        member(*info, at, "texCoord", Type::integer);
        members(*info, at, {"scale", "strength"}, Type::number);
        member(*info, at, "index", Type::integer, true);
    }
    void material(const Json& m, const std::string& path) const {
        if (const Json* pbr = member(m, path, "pbrMetallicRoughness", Type::object)) {
            const std::string at = child_path(path, "pbrMetallicRoughness");
            object(*pbr, at);
            values(*pbr, at, "baseColorFactor", Type::number);
            members(*pbr, at, {"metallicFactor", "roughnessFactor"}, Type::number);
            texture_info(*pbr, at, "baseColorTexture");
            texture_info(*pbr, at, "metallicRoughnessTexture");
        }
        for (const char* key : {"normalTexture", "occlusionTexture", "emissiveTexture"}) texture_info(m, path, key);
        values(m, path, "emissiveFactor", Type::number);
        member(m, path, "alphaMode", Type::string);
        member(m, path, "alphaCutoff", Type::number);
        member(m, path, "doubleSided", Type::boolean);
        // The one material extension read (gltf_materials.cpp multiplies the emissive factor by it).
        if (const auto e = m.find("extensions"); e != m.end() && e->contains("KHR_materials_emissive_strength"))
            member(e->at("KHR_materials_emissive_strength"),
                   child_path(child_path(path, "extensions"), "KHR_materials_emissive_strength"), "emissiveStrength",
                   Type::number);
    }
    void primitive(const Json& p, const std::string& path) const {
        const Json& attributes = *member(p, path, "attributes", Type::object, true);
        for (const auto& [name, accessor] : attributes.items())
            expect(accessor, Type::integer, child_path(child_path(path, "attributes"), name));
        members(p, path, {"indices", "material", "mode"}, Type::integer);
        // Morph targets are read past, but tinygltf parses them: each an object of accessor indices.
        const Json* targets = member(p, path, "targets", Type::array);
        for (size_t t = 0; targets && t < targets->size(); ++t) {
            const std::string at = index_path(child_path(path, "targets"), t);
            expect((*targets)[t], Type::object, at);
            for (const auto& [name, accessor] : (*targets)[t].items())
                expect(accessor, Type::integer, child_path(at, name));
        }
    }
    void accessor(const Json& a, const std::string& path) const {
        members(a, path, {"bufferView", "byteOffset"}, Type::integer);
        member(a, path, "componentType", Type::integer, true);
        member(a, path, "normalized", Type::boolean);
        member(a, path, "count", Type::integer, true);
        member(a, path, "type", Type::string, true);
        values(a, path, "max", Type::number);
        values(a, path, "min", Type::number);
        const Json* sparse = member(a, path, "sparse", Type::object);
        if (!sparse) return;
        const std::string at = child_path(path, "sparse");
        object(*sparse, at);
        member(*sparse, at, "count", Type::integer, true);
        for (const char* key : {"indices", "values"}) {
            const Json& part = object(*member(*sparse, at, key, Type::object, true), child_path(at, key));
            member(part, child_path(at, key), "bufferView", Type::integer, true);
            member(part, child_path(at, key), "byteOffset", Type::integer);
            if (std::string_view(key) == "indices")
                member(part, child_path(at, key), "componentType", Type::integer, true);
        }
    }
};

} // namespace

void check_schema(const Json& json, const Source& source) {
    const Checker c{source};
    const std::string top;
    c.object(json, top);
    c.object(*c.member(json, top, "asset", Type::object, true), "asset");
    c.member(json.at("asset"), "asset", "version", Type::string, true);
    c.values(json, top, "extensionsUsed", Type::string);
    c.values(json, top, "extensionsRequired", Type::string);
    c.member(json, top, "scene", Type::integer);
    c.each(json, top, "scenes", Type::object, [&](const Json& s, const std::string& at) {
        c.values(s, at, "nodes", Type::integer);
    });
    c.each(json, top, "nodes", Type::object, [&](const Json& n, const std::string& at) {
        c.values(n, at, "children", Type::integer);
        c.members(n, at, {"mesh", "skin", "camera"}, Type::integer);
        for (const char* key : {"matrix", "translation", "rotation", "scale", "weights"})
            c.values(n, at, key, Type::number);
        // The specification forbids both (tinygltf took the matrix and dropped the rest without a word).
        if (n.contains("matrix"))
            for (const char* key : {"translation", "rotation", "scale"})
                if (n.contains(key))
                    c.fail(child_path(at, key), "given beside matrix (glTF takes one or the other)");
    });
    c.each(json, top, "meshes", Type::object, [&](const Json& m, const std::string& at) {
        c.member(m, at, "primitives", Type::array, true);
        c.each(m, at, "primitives", Type::object, [&](const Json& p, const std::string& pat) { c.primitive(p, pat); });
        c.values(m, at, "weights", Type::number);
    });
    c.each(json, top, "accessors", Type::object, [&](const Json& a, const std::string& at) { c.accessor(a, at); });
    c.each(json, top, "bufferViews", Type::object, [&](const Json& v, const std::string& at) {
        c.member(v, at, "buffer", Type::integer, true);
        c.member(v, at, "byteLength", Type::integer, true);
        c.members(v, at, {"byteOffset", "byteStride", "target"}, Type::integer);
    });
    c.each(json, top, "buffers", Type::object, [&](const Json& b, const std::string& at) {
        const Json* uri = c.member(b, at, "uri", Type::string);
        const Json* length = c.member(b, at, "byteLength", Type::integer, true);
        // A base64 data URI's bytes against byteLength (tinygltf's own error quoted the whole URI, a megabyte).
        const std::string* text = uri ? &uri->get_ref<const std::string&>() : nullptr;
        const size_t comma = text ? text->find(',') : std::string::npos;
        if (text && text->rfind("data:", 0) == 0 && comma != std::string::npos && comma >= 7 &&
            text->compare(comma - 7, 7, ";base64") == 0) {
            // tinygltf decodes up to the first '=' (padding).
            const size_t end = std::min(text->find('=', comma + 1), text->size());
            const size_t other =
                text->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", comma + 1);
            const size_t bad = other < end ? other : text->find_first_not_of('=', end);
            if (bad != std::string::npos)
                c.fail(child_path(at, "uri"), "its base64 data holds a character base64 has not (at character " +
                                                  std::to_string(bad - comma - 1) + ")");
            const size_t chars = end - comma - 1;
            const size_t bytes = chars / 4 * 3 + (chars % 4 > 1 ? chars % 4 - 1 : 0);
            const uint64_t declared = length->get<uint64_t>();
            if (bytes != declared)
                c.fail(child_path(at, "byteLength"), std::to_string(declared) + ", but its data URI holds " +
                                                         std::to_string(bytes) + " bytes");
        }
    });
    c.each(json, top, "materials", Type::object, [&](const Json& m, const std::string& at) { c.material(m, at); });
    c.each(json, top, "textures", Type::object, [&](const Json& t, const std::string& at) {
        c.members(t, at, {"sampler", "source"}, Type::integer);
    });
    c.each(json, top, "images", Type::object, [&](const Json& i, const std::string& at) {
        c.members(i, at, {"uri", "mimeType"}, Type::string);
        c.member(i, at, "bufferView", Type::integer);
    });
    c.each(json, top, "samplers", Type::object, [&](const Json& s, const std::string& at) {
        c.members(s, at, {"magFilter", "minFilter", "wrapS", "wrapT"}, Type::integer);
    });
    // Read past with a note, but still glTF objects: a wrong type there is a broken file all the same.
    for (const char* key : {"animations", "skins", "cameras"})
        c.each(json, top, key, Type::object, [](const Json&, const std::string&) {});
}

} // namespace adjoint::app::detail::gltf
