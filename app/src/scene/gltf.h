// glTF 2.0 reading shared by gltf_mesh.cpp, gltf_accessor.cpp and gltf_materials.cpp (tinygltf's model, checked).
#pragma once
#include "scene/loading.h"

#include <set>
#include <string>
#include <tiny_gltf.h>
#include <vector>

namespace adjoint::app::detail::gltf {

// Where a glTF file's problems are reported: `meshes[i].file` and the file as the scene names it; notes (what
// is read past) are collected once each and printed to stderr when the file is done.
struct Source {
    const JsonValue& where;
    std::string shown;                  // the glTF file, relative to the scene
    std::filesystem::path folder;       // its folder, for external buffers and images
    std::string shown_folder;           // the same, relative to the scene
    std::set<std::string> notes;

    [[noreturn]] void fail(const std::string& what) const { where.fail(shown + ": " + what); }
    void note(const std::string& what) { notes.insert(what); }
};

// The file parsed: its buffers loaded (external files relative to its folder), images kept encoded. Refused:
// another version than 2.x, a required extension other than KHR_mesh_quantization, a schema break (check_schema),
// whatever tinygltf refuses.
tinygltf::Model parse_file(const std::filesystem::path& path, Source& source);
// The raw JSON (of a .gltf, or a .glb's JSON chunk) against glTF 2.0's schema, for the members that reach the
// mesh or its materials: a wrong type or a missing required member fails naming its JSON path
// ("materials[0].pbrMetallicRoughness: expected an object"). gltf_schema.cpp.
void check_schema(const Json& json, const Source& source);

// `count` elements of `element` bytes, `stride` apart, from byte `offset` of buffer view `view`: the first byte,
// after checking that the view lies inside its buffer and the last element inside the view.
const unsigned char* checked_bytes(const tinygltf::Model& model, int view, size_t offset, size_t count,
                                   size_t element, size_t stride, const std::string& what, const Source& source);
// Image `index`'s encoded bytes (from its file, data URI or buffer view) and how errors name it (`shown`).
std::string image_bytes(const tinygltf::Model& model, int index, std::string& shown, Source& source);

// An accessor read as floats, `components` per element: normalized integers map to [0, 1] or [−1, 1], other
// integers to their value; sparse accessors applied. Every read is checked against its buffer view and
// buffer; `what` names the use ("mesh 0 primitive 1 POSITION") in errors.
struct Floats {
    std::vector<float> values;
    size_t count = 0;
    int components = 0;   // 1 (SCALAR) .. 4 (VEC4)
};
Floats read_floats(const tinygltf::Model& model, int accessor, const std::string& what, Source& source);
// An index accessor (SCALAR, unsigned byte, short or int, not normalized).
std::vector<uint32_t> read_indices(const tinygltf::Model& model, int accessor, const std::string& what,
                                   Source& source);

// The scene materials for the glTF materials that `used` marks (index = glTF material; the last entry is the
// default material, for primitives without one), named `<mesh>/<name or index>`, textures loaded into
// scene.textures. Returns the scene index of each used one (−1 where unused).
std::vector<int> add_materials(const tinygltf::Model& model, const std::vector<bool>& used, const Mesh& mesh,
                               Source& source, Scene& scene);

} // namespace adjoint::app::detail::gltf
