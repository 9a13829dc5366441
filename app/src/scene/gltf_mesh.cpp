// The glTF 2.0 mesh format: every triangle primitive of the default scene, node transforms applied, as one mesh.
#include "scene/gltf.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <unordered_map>

namespace adjoint::app::detail {

namespace gltf {
namespace {

// After instancing (a mesh may hang under many nodes), so that a small file cannot ask for unbounded memory.
constexpr size_t max_vertices = size_t(1) << 24, max_triangles = size_t(1) << 24;

using Matrix = std::array<double, 16>;   // column-major, as glTF writes it
constexpr Matrix identity{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

Matrix multiply(const Matrix& a, const Matrix& b) {
    Matrix m{};
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
            for (int k = 0; k < 4; ++k) m[size_t(c * 4 + r)] += a[size_t(k * 4 + r)] * b[size_t(c * 4 + k)];
    return m;
}

// A node's local transform: its matrix, or translation · rotation · scale.
Matrix local_matrix(const tinygltf::Node& node, int index, const Source& source) {
    const std::string name = "node " + std::to_string(index);
    const auto check = [&](const std::vector<double>& v, size_t size, const char* key) {
        if (!v.empty() && v.size() != size)
            source.fail(name + ": " + key + " has " + std::to_string(v.size()) + " numbers (" + std::to_string(size) + ")");
        for (double x : v)
            if (!std::isfinite(x)) source.fail(name + ": " + key + " holds a number that is not finite");
    };
    check(node.matrix, 16, "matrix"), check(node.translation, 3, "translation");
    check(node.rotation, 4, "rotation"), check(node.scale, 3, "scale");
    if (!node.matrix.empty()) {
        Matrix m;
        std::copy(node.matrix.begin(), node.matrix.end(), m.begin());
        return m;
    }
    const std::vector<double>& t = node.translation;
    double x = 0, y = 0, z = 0, w = 1;   // glTF's quaternion order: x, y, z, w
    if (!node.rotation.empty()) {
        const double n = std::sqrt(node.rotation[0] * node.rotation[0] + node.rotation[1] * node.rotation[1] +
                                   node.rotation[2] * node.rotation[2] + node.rotation[3] * node.rotation[3]);
        if (!(n > 0)) source.fail(name + ": rotation is the zero quaternion");
        x = node.rotation[0] / n, y = node.rotation[1] / n, z = node.rotation[2] / n, w = node.rotation[3] / n;
    }
    const double sx = node.scale.empty() ? 1 : node.scale[0], sy = node.scale.empty() ? 1 : node.scale[1],
                 sz = node.scale.empty() ? 1 : node.scale[2];
    return {(1 - 2 * (y * y + z * z)) * sx, 2 * (x * y + z * w) * sx, 2 * (x * z - y * w) * sx, 0,
            2 * (x * y - z * w) * sy, (1 - 2 * (x * x + z * z)) * sy, 2 * (y * z + x * w) * sy, 0,
            2 * (x * z + y * w) * sz, 2 * (y * z - x * w) * sz, (1 - 2 * (x * x + y * y)) * sz, 0,
            t.empty() ? 0 : t[0], t.empty() ? 0 : t[1], t.empty() ? 0 : t[2], 1};
}

// The mesh being built: vertices in first-use order, merged into one "OBJ position" per distinct (position,
// colour) so that vertices split at normal or UV seams move together as the vertices parameter.
struct Builder {
    Mesh& mesh;
    std::vector<uint32_t> slots;           // per triangle: glTF material, or materials.size() for none
    std::vector<bool> normal_given;        // per vertex
    bool all_texcoords = true, all_colors = true;
    std::unordered_map<uint64_t, std::vector<uint32_t>> positions_by_hash;
    // Accessors decoded once: primitives share them, and a mesh may hang under many nodes.
    std::unordered_map<int, Floats> floats;
    std::unordered_map<int, std::vector<uint32_t>> indices;

    uint32_t obj_position(float3 p, float3 c) {
        uint64_t h = 0;
        for (float f : {p.x, p.y, p.z, c.x, c.y, c.z}) h = (h ^ std::bit_cast<uint32_t>(f + 0.0f)) * 0x9E3779B97F4A7C15ull;
        std::vector<uint32_t>& same = positions_by_hash[h];
        for (uint32_t i : same)
            if (mesh.obj_positions[i] == p && mesh.obj_colors[i] == c) return i;
        same.push_back(uint32_t(mesh.obj_positions.size()));
        mesh.obj_positions.push_back(p);
        mesh.obj_colors.push_back(c);
        return same.back();
    }
};

const char* mode_name(int mode) {
    switch (mode) {
    case TINYGLTF_MODE_POINTS: return "POINTS";
    case TINYGLTF_MODE_LINE: return "LINES";
    case TINYGLTF_MODE_LINE_LOOP: return "LINE_LOOP";
    case TINYGLTF_MODE_LINE_STRIP: return "LINE_STRIP";
    default: return nullptr;
    }
}

// The primitive's corners as triangles (strips and fans as the specification's section 3.7.2.1 lists them).
std::vector<uint32_t> triangle_corners(const std::vector<uint32_t>& index, int mode, const std::string& name,
                                       const Source& source) {
    std::vector<uint32_t> corners;
    const size_t n = index.size();
    if (mode == TINYGLTF_MODE_TRIANGLES) {
        if (n % 3 != 0) source.fail(name + ": " + std::to_string(n) + " indices, not a multiple of 3");
        corners = index;
    } else if (mode == TINYGLTF_MODE_TRIANGLE_STRIP) {
        for (size_t i = 0; i + 2 < n; ++i)
            corners.insert(corners.end(), {index[i], index[i + 1 + i % 2], index[i + 2 - i % 2]});
    } else {   // fan
        for (size_t i = 0; i + 2 < n; ++i) corners.insert(corners.end(), {index[i + 1], index[i + 2], index[0]});
    }
    return corners;
}

void add_primitive(const tinygltf::Model& model, int mesh_index, int p, const Matrix& world, Builder& b,
                   Source& source) {
    const tinygltf::Primitive& prim = model.meshes[size_t(mesh_index)].primitives[size_t(p)];
    const std::string name = "mesh " + std::to_string(mesh_index) + " primitive " + std::to_string(p);
    const int mode = prim.mode < 0 ? TINYGLTF_MODE_TRIANGLES : prim.mode;
    // CAD exports carry edge lines beside their surfaces: skipped, said (a file of nothing else has no triangles).
    if (const char* other = mode_name(mode)) {
        source.note(std::string(other) + " primitives skipped (Adjoint draws TRIANGLES, TRIANGLE_STRIP and "
                    "TRIANGLE_FAN)");
        return;
    }
    if (mode != TINYGLTF_MODE_TRIANGLES && mode != TINYGLTF_MODE_TRIANGLE_STRIP && mode != TINYGLTF_MODE_TRIANGLE_FAN)
        source.fail(name + ": mode " + std::to_string(mode) + " is not one of glTF's");
    if (!prim.targets.empty()) source.note("morph targets ignored");
    const auto attribute = [&](const char* key, std::initializer_list<int> components) -> const Floats* {
        const auto found = prim.attributes.find(key);
        if (found == prim.attributes.end()) return nullptr;
        auto cached = b.floats.find(found->second);
        if (cached == b.floats.end())
            cached = b.floats.emplace(found->second, read_floats(model, found->second, name + " " + key, source)).first;
        const Floats& f = cached->second;
        if (std::find(components.begin(), components.end(), f.components) == components.end())
            source.fail(name + " " + key + ": " + std::to_string(f.components) + " components per element");
        return &f;
    };
    const Floats* position = attribute("POSITION", {3});
    if (!position) source.fail(name + " has no POSITION");
    const size_t n = position->count;
    const Floats *normal = attribute("NORMAL", {3}), *uv = attribute("TEXCOORD_0", {2}),
                 *color = attribute("COLOR_0", {3, 4});
    using Named = std::pair<const Floats*, const char*>;
    for (const auto& [f, key] : {Named{normal, "NORMAL"}, Named{uv, "TEXCOORD_0"}, Named{color, "COLOR_0"}})
        if (f && f->count != n)
            source.fail(name + " " + key + ": " + std::to_string(f->count) + " elements, POSITION has " + std::to_string(n));
    b.all_texcoords = b.all_texcoords && uv;
    b.all_colors = b.all_colors && color;

    std::vector<uint32_t> index;
    if (prim.indices >= 0) {
        auto cached = b.indices.find(prim.indices);
        if (cached == b.indices.end())
            cached = b.indices.emplace(prim.indices, read_indices(model, prim.indices, name + " indices", source)).first;
        index = cached->second;
        for (uint32_t i : index)
            if (i >= n) source.fail(name + ": index " + std::to_string(i) + " is past its " + std::to_string(n) + " vertices");
    } else {
        index.resize(n);
        for (size_t i = 0; i < n; ++i) index[i] = uint32_t(i);
    }
    std::vector<uint32_t> corners = triangle_corners(index, mode, name, source);
    const double* m = world.data();
    // Normals go through the cofactor matrix (the inverse transpose times the determinant), signed so that a
    // mirroring node does not turn them inward; a mirroring node also reverses the triangles' winding.
    const double det = m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) +
                       m[8] * (m[1] * m[6] - m[5] * m[2]);
    const double s = det < 0 ? -1 : 1;
    const double cof[9] = {s * (m[5] * m[10] - m[6] * m[9]), s * (m[6] * m[8] - m[4] * m[10]), s * (m[4] * m[9] - m[5] * m[8]),
                           s * (m[2] * m[9] - m[1] * m[10]), s * (m[0] * m[10] - m[2] * m[8]), s * (m[1] * m[8] - m[0] * m[9]),
                           s * (m[1] * m[6] - m[2] * m[5]), s * (m[2] * m[4] - m[0] * m[6]), s * (m[0] * m[5] - m[1] * m[4])};
    Mesh& mesh = b.mesh;
    std::vector<uint32_t> vertex_of(n, UINT32_MAX);   // only the vertices the triangles use are taken
    const uint32_t slot = prim.material >= 0 ? uint32_t(prim.material) : uint32_t(model.materials.size());
    if (prim.material >= int(model.materials.size()))
        source.fail(name + ": material " + std::to_string(prim.material) + " does not exist (the file has " +
                    std::to_string(model.materials.size()) + ")");
    for (size_t t = 0; t + 2 < corners.size(); t += 3) {
        uint32_t v[3];
        for (size_t k = 0; k < 3; ++k) {
            const uint32_t i = corners[t + k];
            if (vertex_of[i] == UINT32_MAX) {
                if (mesh.positions.size() >= max_vertices)
                    source.fail("more than " + std::to_string(max_vertices) + " vertices in its scene");
                const float* q = &position->values[3 * size_t(i)];
                if (!std::isfinite(q[0]) || !std::isfinite(q[1]) || !std::isfinite(q[2]))
                    source.fail(name + ": vertex " + std::to_string(i) + " has a position that is not finite");
                float3 world_p;
                for (int r = 0; r < 3; ++r)
                    world_p[r] = float(m[r] * q[0] + m[4 + r] * q[1] + m[8 + r] * q[2] + m[12 + r]);
                float3 c(1.0f);
                if (color) {
                    const float* cc = &color->values[size_t(color->components) * i];
                    c = float3(cc[0], cc[1], cc[2]);   // glTF vertex colours are linear
                    if (!(c.x >= 0 && c.y >= 0 && c.z >= 0 && std::isfinite(c.x + c.y + c.z)))
                        source.fail(name + ": vertex " + std::to_string(i) + " has a colour below 0 or not finite");
                }
                float3 world_n(0.0f);
                if (normal) {
                    const float* nn = &normal->values[3 * size_t(i)];
                    for (int r = 0; r < 3; ++r)
                        world_n[r] = float(cof[r] * nn[0] + cof[3 + r] * nn[1] + cof[6 + r] * nn[2]);
                }
                const bool normal_ok = normal && std::isfinite(length(world_n)) && length(world_n) > 0;
                float2 texcoord(0.0f);
                if (uv) {
                    // glTF's (0, 0) is the image's first texel, as in the scene's convention: no flip.
                    texcoord = float2(uv->values[2 * size_t(i)], uv->values[2 * size_t(i) + 1]);
                    if (!std::isfinite(texcoord.x) || !std::isfinite(texcoord.y))
                        source.fail(name + ": vertex " + std::to_string(i) + " has a texture coordinate that is not finite");
                }
                vertex_of[i] = uint32_t(mesh.positions.size());
                mesh.positions.push_back(world_p);
                mesh.colors.push_back(c);
                mesh.normals.push_back(normal_ok ? normalize(world_n) : float3(0, 0, 1));
                b.normal_given.push_back(normal_ok);
                mesh.texcoords.push_back(texcoord);
                mesh.position_ids.push_back(b.obj_position(world_p, c));
            }
            v[k] = vertex_of[i];
        }
        if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) continue;   // strips join with degenerate triangles
        if (mesh.triangles.size() >= max_triangles)
            source.fail("more than " + std::to_string(max_triangles) + " triangles in its scene");
        mesh.triangles.push_back(det < 0 ? uint3(v[0], v[2], v[1]) : uint3(v[0], v[1], v[2]));
        b.slots.push_back(slot);
    }
}

// The scene's node forest, depth first without recursion (a file may nest nodes deeply); a node reached a
// second time is a cycle or a node with two parents, both outside glTF.
void add_scene(const tinygltf::Model& model, Builder& b, Source& source) {
    if (model.scenes.empty()) source.fail("has no scenes");
    const int s = model.defaultScene >= 0 ? model.defaultScene : 0;
    if (size_t(s) >= model.scenes.size())
        source.fail("scene " + std::to_string(s) + " does not exist (the file has " + std::to_string(model.scenes.size()) + ")");
    struct Frame {
        int node;
        Matrix world;
        size_t next_child = 0;
    };
    std::vector<char> reached(model.nodes.size(), 0), on_path(model.nodes.size(), 0);
    std::vector<Frame> stack;
    const auto enter = [&](int node, const Matrix& parent, const std::string& from) {
        if (node < 0 || size_t(node) >= model.nodes.size())
            source.fail(from + " names node " + std::to_string(node) + ", which does not exist (the file has " +
                        std::to_string(model.nodes.size()) + ")");
        if (on_path[size_t(node)]) source.fail("node " + std::to_string(node) + " is its own ancestor (a node cycle)");
        if (reached[size_t(node)])
            source.fail("node " + std::to_string(node) + " has two parents (glTF's nodes form trees)");
        reached[size_t(node)] = on_path[size_t(node)] = 1;
        const tinygltf::Node& n = model.nodes[size_t(node)];
        const Matrix world = multiply(parent, local_matrix(n, node, source));
        if (n.skin >= 0) source.note("skins ignored (meshes are read in their bind pose)");
        if (n.camera >= 0) source.note("cameras ignored");
        if (n.mesh >= 0) {
            if (size_t(n.mesh) >= model.meshes.size())
                source.fail("node " + std::to_string(node) + " names mesh " + std::to_string(n.mesh) +
                            ", which does not exist (the file has " + std::to_string(model.meshes.size()) + ")");
            for (size_t p = 0; p < model.meshes[size_t(n.mesh)].primitives.size(); ++p)
                add_primitive(model, n.mesh, int(p), world, b, source);
        }
        stack.push_back({node, world});
    };
    for (int root : model.scenes[size_t(s)].nodes) {
        enter(root, identity, "scene " + std::to_string(s));
        while (!stack.empty()) {
            Frame& top = stack.back();
            const std::vector<int>& children = model.nodes[size_t(top.node)].children;
            if (top.next_child == children.size()) {
                on_path[size_t(top.node)] = 0;
                stack.pop_back();
                continue;
            }
            const int child = children[top.next_child++];
            const Matrix world = top.world;   // enter() may reallocate the stack
            enter(child, world, "node " + std::to_string(top.node));
        }
    }
}

void load_gltf_mesh(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material, Mesh& mesh,
                    Scene& scene) {
    const JsonValue file_json = entry.require("file");
    const JsonValue material_json = entry.require("material");
    if (scene_material == mtl_materials)
        material_json.fail("\"mtl\" names an OBJ's MTL materials; " + mesh.file +
                           " is glTF: name one of `materials`, or \"gltf\" for its own materials");
    const std::filesystem::path path = base_dir / mesh.file;
    Source source{file_json, mesh.file, path.parent_path(), std::filesystem::path(mesh.file).parent_path().string(), {}};
    const tinygltf::Model model = parse_file(path, source);
    for (const std::string& e : model.extensionsUsed)
        if (e != "KHR_mesh_quantization" && e != "KHR_materials_emissive_strength")
            source.note("extension " + e + " ignored");
    if (!model.animations.empty()) source.note("animations ignored");

    Builder b{mesh, {}, {}, true, true, {}, {}, {}};
    add_scene(model, b, source);
    if (mesh.triangles.empty()) {
        const bool skipped = std::any_of(source.notes.begin(), source.notes.end(), [](const std::string& n) {
            return n.find(" primitives skipped (") != std::string::npos;
        });
        source.fail(std::string("has no triangles in its scene") +
                    (skipped ? " (its POINTS and LINES primitives are skipped)" : ""));
    }
    mesh.has_texcoords = b.all_texcoords;
    mesh.has_colors = b.all_colors;
    // Some vertex without a usable normal: area-weighted normals for all, as for OBJ and PLY.
    mesh.normals_computed = std::find(b.normal_given.begin(), b.normal_given.end(), false) != b.normal_given.end();
    if (mesh.normals_computed) compute_normals(mesh);

    std::vector<int> material_of;
    if (scene_material == gltf_materials) {
        std::vector<bool> used(model.materials.size() + 1, false);
        for (uint32_t slot : b.slots) used[slot] = true;
        material_of = add_materials(model, used, mesh, source, scene);
    }
    mesh.triangle_materials.reserve(b.slots.size());
    for (uint32_t slot : b.slots)
        mesh.triangle_materials.push_back(uint32_t(scene_material == gltf_materials ? material_of[slot] : scene_material));
    if (!mesh.has_texcoords)
        for (uint32_t id : std::set<uint32_t>(mesh.triangle_materials.begin(), mesh.triangle_materials.end()))
            if (scene.materials[id].has_textures())
                material_json.fail(mesh.file + " has no texture coordinates (TEXCOORD_0) on every primitive, which the "
                                   "textured material " + scene.materials[id].name + " needs");
    note_mesh_file(file_json, mesh.file, source.notes);
}

constexpr std::string_view gltf_extensions[] = {".gltf", ".glb"};

} // namespace
} // namespace gltf

const MeshFormat gltf_mesh_format{"glTF", gltf::gltf_extensions, gltf::load_gltf_mesh};

} // namespace adjoint::app::detail
