// OBJ meshes (tinyobjloader) into unified, GPU-ready vertex arrays; MTL materials into scene materials.
#include "scene/loading.h"
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tiny_obj_loader.h>
#include <unordered_map>

namespace adjoint::app::detail {

namespace {

// What an MTL file says explicitly: tinyobjloader fills absent values with its own defaults (Ns 1,
// Kd 0), but the scene format's defaults apply to what is absent.
struct MtlPresence {
    bool kd = false, ks = false, ns = false;
};

// Reads the `mtllib` files named by an OBJ, relative to the OBJ's folder; remembers what failed so the
// loader can name it (tinyobjloader only warns).
class MtlReader : public tinyobj::MaterialReader {
public:
    MtlReader(std::filesystem::path folder, std::string shown_folder, bool wanted, const JsonValue& where)
        : folder_(std::move(folder)), shown_folder_(std::move(shown_folder)), wanted_(wanted), where_(where) {}

    bool operator()(const std::string& name, std::vector<tinyobj::material_t>* materials,
                    std::map<std::string, int>* names, std::string* warn, std::string* err) override {
        requested = true;
        if (!wanted_) return false;
        const std::string shown = (std::filesystem::path(shown_folder_) / name).lexically_normal().string();
        std::string text;
        try {
            text = read_file(folder_ / name, shown, where_);
        } catch (const SceneError& e) {
            if (failure.empty()) failure = e.reason();
            return false;
        }
        if (std::string problem = check_mtl_text(text, shown); !problem.empty()) {
            if (invalid.empty()) invalid = std::move(problem);
            return false;
        }
        text = mtl_text_for_tinyobj(text);
        scan_presence(text);
        std::istringstream stream(text);
        tinyobj::LoadMtl(names, materials, &stream, warn, err);
        loaded.push_back(shown);
        return true;
    }

    bool requested = false;
    std::string failure;            // the first MTL that could not be read
    std::string invalid;            // the first problem of an MTL's text (check_mtl_text)
    std::vector<std::string> loaded; // MTL files read, as shown
    std::map<std::string, MtlPresence> presence;

private:
    void scan_presence(const std::string& text) {
        std::istringstream lines(text);
        std::string line, current;
        while (std::getline(lines, line)) {
            std::istringstream words(line);
            std::string key;
            words >> key;
            if (key == "newmtl") {
                std::getline(words >> std::ws, current);
                while (!current.empty() && (current.back() == '\r' || current.back() == ' ')) current.pop_back();
            } else if (key == "Kd") {
                presence[current].kd = true;
            } else if (key == "Ks") {
                presence[current].ks = true;
            } else if (key == "Ns") {
                presence[current].ns = true;
            }
        }
    }

    std::filesystem::path folder_;
    std::string shown_folder_;
    bool wanted_;
    const JsonValue& where_;
};

struct CornerKey {
    int v, vn, vt;
    bool operator==(const CornerKey&) const = default;
};
struct CornerHash {
    size_t operator()(const CornerKey& k) const {
        uint64_t h = static_cast<uint32_t>(k.v);
        h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(k.vn);
        h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(k.vt);
        return static_cast<size_t>(h ^ (h >> 29));
    }
};

// What of an MTL material the phong material does not take (Kd or map_Kd, Ks, Ns), for a note: a look that
// differs from the file's other viewers should not come as a surprise. Ka is not named: exporters write it
// for every material, and under the scene's own lights it has no part.
std::vector<std::string> mtl_ignored(const tinyobj::material_t& m) {
    std::vector<std::string> ignored;
    if (m.dissolve < 1 || !m.alpha_texname.empty())
        ignored.push_back("transparency (d, Tr, map_d) ignored: materials are opaque");
    if (m.emission[0] > 0 || m.emission[1] > 0 || m.emission[2] > 0 || !m.emissive_texname.empty())
        ignored.push_back("emission (Ke, map_Ke) ignored: phong materials do not emit");
    const std::pair<const std::string*, const char*> textures[] = {
        {&m.ambient_texname, "map_Ka"}, {&m.specular_texname, "map_Ks"}, {&m.specular_highlight_texname, "map_Ns"},
        {&m.bump_texname, "bump map (map_Bump, bump)"}, {&m.normal_texname, "normal map (norm)"},
        {&m.displacement_texname, "displacement (disp)"}, {&m.reflection_texname, "reflection map (refl)"},
        {&m.roughness_texname, "map_Pr"}, {&m.metallic_texname, "map_Pm"}, {&m.sheen_texname, "map_Ps"}};
    for (const auto& [name, what] : textures)
        if (!name->empty()) ignored.push_back(std::string(what) + " ignored");
    return ignored;
}

// Adds the MTL materials that faces use (in MTL order) as `<mesh>/<name>`; returns MTL id → scene index.
std::vector<int> add_mtl_materials(const std::vector<tinyobj::material_t>& mtl, const std::vector<bool>& used,
                                   const MtlReader& reader, const std::filesystem::path& obj_folder,
                                   const std::string& shown_folder, const JsonValue& where, Mesh& mesh,
                                   Scene& scene, std::set<std::string>& notes) {
    std::vector<int> index(mtl.size(), -1);
    for (size_t m = 0; m < mtl.size(); ++m) {
        if (!used[m]) continue;
        const tinyobj::material_t& source = mtl[m];
        const auto found = reader.presence.find(source.name);
        const MtlPresence presence = found == reader.presence.end() ? MtlPresence{} : found->second;
        const std::string name = material_name_from_tinyobj(source.name);
        Material material = make_material(mesh.name + "/" + name, "phong");
        if (scene.find_material(material.name) >= 0)
            where.fail("the MTL material " + name + " is named " + material.name +
                       ", which another material already has");
        if (!source.diffuse_texname.empty()) {
            // map_Kd replaces Kd; texture names are relative to the OBJ's folder, as for mtllib.
            const std::string file = windows_path(obj_folder, source.diffuse_texname);
            const std::string shown = (std::filesystem::path(shown_folder) / file).lexically_normal().string();
            scene.textures.push_back(load_image(obj_folder / file, shown, where));
            material.texture("albedo_texture") = static_cast<int32_t>(scene.textures.size() - 1);
        } else if (presence.kd) {
            std::copy_n(source.diffuse, 3, material.value("albedo").begin());
        } else {
            where.fail("the MTL material " + name + " has neither Kd nor map_Kd");
        }
        if (presence.ks) std::copy_n(source.specular, 3, material.value("specular").begin());
        if (presence.ns) material.value("shininess")[0] = source.shininess;
        for (const std::string& what : mtl_ignored(source)) notes.insert("MTL material " + name + ": " + what);
        scene.materials.push_back(std::move(material));
        index[m] = static_cast<int>(scene.materials.size() - 1);
    }
    return index;
}

} // namespace

void compute_normals(Mesh& mesh) {
    std::vector<float3> accumulated(mesh.obj_positions.size(), float3(0.0f));
    for (const uint3& t : mesh.triangles) {
        const uint32_t a = mesh.position_ids[t.x], b = mesh.position_ids[t.y], c = mesh.position_ids[t.z];
        const float3 pa = mesh.obj_positions[a], pb = mesh.obj_positions[b], pc = mesh.obj_positions[c];
        // |cross| is twice the area: the sum weights each face by its area.
        const float3 n = cross(pb - pa, pc - pa);
        for (uint32_t p : {a, b, c}) accumulated[p] = accumulated[p] + n;
    }
    mesh.normals.resize(mesh.positions.size());
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
        const float3 n = accumulated[mesh.position_ids[v]];
        // A position only on degenerate faces has no direction; +z keeps the value finite.
        mesh.normals[v] = length(n) > 0 ? normalize(n) : float3(0, 0, 1);
    }
}


void load_obj_mesh(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material, Mesh& mesh,
                   Scene& scene) {
    const JsonValue file_json = entry.require("file");
    const JsonValue material_json = entry.require("material");
    const std::filesystem::path obj_path = base_dir / mesh.file;
    const std::filesystem::path obj_folder = obj_path.parent_path();
    const std::string shown_folder = std::filesystem::path(mesh.file).parent_path().string();
    const std::string text = read_file(obj_path, mesh.file, file_json);
    const std::vector<uint32_t> face_corners = check_obj_text(text, mesh.file, file_json);

    if (scene_material == gltf_materials)
        material_json.fail("\"gltf\" names a glTF file's materials; " + mesh.file +
                           " is OBJ: name one of `materials`, or \"mtl\" for its MTL file");
    const bool want_mtl = scene_material == mtl_materials;
    MtlReader reader(obj_folder, shown_folder, want_mtl, material_json);
    tinyobj::attrib_t attrib;
    std::vector<tinyobj::shape_t> shapes;
    std::vector<tinyobj::material_t> mtl;
    std::string warn, err;
    std::istringstream stream(obj_text_for_tinyobj(text));
    // No white fallback: colours count only when every `v` line has them. Faces are read whole and triangulated
    // below: tinyobjloader clips a polygon of more than 4 corners that is not convex into triangles that miss
    // parts of it or cover more, and splits a quad along its shorter diagonal, which may be outside a concave one.
    if (!tinyobj::LoadObj(&attrib, &shapes, &mtl, &warn, &err, &stream, &reader, /*triangulate=*/false,
                          /*default_vcols_fallback=*/false)) {
        while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
        file_json.fail("cannot parse " + mesh.file + ": " + err);
    }
    if (want_mtl) {
        if (!reader.invalid.empty()) material_json.fail(reader.invalid);
        if (!reader.requested) material_json.fail(mesh.file + " names no MTL file (mtllib)");
        if (reader.loaded.empty()) material_json.fail(reader.failure);
    }

    const size_t position_count = attrib.vertices.size() / 3;
    const size_t normal_count = attrib.normals.size() / 3;
    const size_t texcoord_count = attrib.texcoords.size() / 2;
    mesh.obj_positions.resize(position_count);
    mesh.obj_colors.assign(position_count, float3(1.0f));
    mesh.has_colors = position_count > 0 && attrib.colors.size() == attrib.vertices.size();
    for (size_t p = 0; p < position_count; ++p) {
        mesh.obj_positions[p] = float3(attrib.vertices[3 * p], attrib.vertices[3 * p + 1], attrib.vertices[3 * p + 2]);
        if (mesh.has_colors)
            mesh.obj_colors[p] = float3(attrib.colors[3 * p], attrib.colors[3 * p + 1], attrib.colors[3 * p + 2]);
    }

    // Check every corner and decide which attributes the whole mesh has. A face's corner count is the text's
    // (face_corners, in the order tinyobjloader keeps faces across shapes): tinyobjloader's own is a byte.
    size_t face_count = 0, face = 0;   // triangles; faces so far
    bool all_normals = true, all_texcoords = true;
    std::vector<bool> mtl_used(mtl.size(), false);
    for (const tinyobj::shape_t& shape : shapes) {
        const tinyobj::mesh_t& m = shape.mesh;
        size_t corners = 0;
        for (size_t f = 0; f < m.num_face_vertices.size(); ++f, ++face) {
            if (face >= face_corners.size() || (face_corners[face] & 0xFF) != m.num_face_vertices[f])
                file_json.fail(mesh.file + ": tinyobjloader read face " + std::to_string(face + 1) +
                               " with other corners than the text has");
            corners += face_corners[face];
            face_count += face_corners[face] - 2;
            if (want_mtl) {
                const int id = m.material_ids[f];
                if (id < 0 || static_cast<size_t>(id) >= mtl.size()) {
                    std::vector<std::string> names;
                    for (const tinyobj::material_t& material : mtl)
                        names.push_back(material_name_from_tinyobj(material.name));
                    material_json.fail(unknown_usemtl(text, names, mesh.file));
                }
                mtl_used[static_cast<size_t>(id)] = true;
            }
        }
        if (corners != m.indices.size())
            file_json.fail(mesh.file + ": tinyobjloader read faces with other corners than the text has");
        for (const tinyobj::index_t& i : m.indices) {
            if (i.vertex_index < 0 || static_cast<size_t>(i.vertex_index) >= position_count)
                file_json.fail(mesh.file + ": a face refers to position " + std::to_string(i.vertex_index + 1) +
                               " of " + std::to_string(position_count));
            if (i.normal_index >= static_cast<int>(normal_count))
                file_json.fail(mesh.file + ": a face refers to normal " + std::to_string(i.normal_index + 1) +
                               " of " + std::to_string(normal_count));
            if (i.texcoord_index >= static_cast<int>(texcoord_count))
                file_json.fail(mesh.file + ": a face refers to texture coordinate " +
                               std::to_string(i.texcoord_index + 1) + " of " + std::to_string(texcoord_count));
            if (i.normal_index < 0) {
                all_normals = false;
            } else {
                const float* n = &attrib.normals[3 * static_cast<size_t>(i.normal_index)];
                if (n[0] == 0 && n[1] == 0 && n[2] == 0) all_normals = false;
            }
            all_texcoords = all_texcoords && i.texcoord_index >= 0;
        }
    }
    if (face_count == 0) file_json.fail(mesh.file + " has no faces");
    mesh.normals_computed = !all_normals;
    mesh.has_texcoords = all_texcoords;

    std::vector<int> material_index;
    std::set<std::string> notes;
    if (want_mtl)
        material_index = add_mtl_materials(mtl, mtl_used, reader, obj_folder, shown_folder, material_json, mesh, scene,
                                           notes);

    // Unify corners: one vertex per distinct (position, normal, texcoord) triple, in first-use order.
    std::unordered_map<CornerKey, uint32_t, CornerHash> unified;
    const auto vertex = [&](const tinyobj::index_t& i) {
        const CornerKey key{i.vertex_index, mesh.normals_computed ? -1 : i.normal_index,
                            mesh.has_texcoords ? i.texcoord_index : -1};
        auto [it, inserted] = unified.try_emplace(key, static_cast<uint32_t>(mesh.positions.size()));
        if (inserted) {
            const size_t p = static_cast<size_t>(key.v);
            mesh.positions.push_back(mesh.obj_positions[p]);
            mesh.colors.push_back(mesh.obj_colors[p]);
            mesh.position_ids.push_back(static_cast<uint32_t>(p));
            if (!mesh.normals_computed) {
                const float* n = &attrib.normals[3 * static_cast<size_t>(key.vn)];
                mesh.normals.push_back(normalize(float3(n[0], n[1], n[2])));
            }
            if (mesh.has_texcoords) {
                const float* t = &attrib.texcoords[2 * static_cast<size_t>(key.vt)];
                mesh.texcoords.push_back(float2(t[0], 1.0f - t[1]));
            } else {
                mesh.texcoords.push_back(float2(0.0f, 0.0f));
            }
        }
        return it->second;
    };
    // Each face's triangles keep its corners' own position, normal and texture coordinate indices.
    mesh.triangles.reserve(face_count);
    mesh.triangle_materials.reserve(face_count);
    std::vector<float3> polygon;
    std::vector<uint3> pieces;
    face = 0;
    for (const tinyobj::shape_t& shape : shapes) {
        const tinyobj::mesh_t& m = shape.mesh;
        size_t first = 0;
        for (size_t f = 0; f < m.num_face_vertices.size(); first += face_corners[face], ++f, ++face) {
            polygon.clear();
            pieces.clear();
            for (size_t k = 0; k < face_corners[face]; ++k)
                polygon.push_back(mesh.obj_positions[static_cast<size_t>(m.indices[first + k].vertex_index)]);
            triangulate_polygon(polygon, pieces);
            for (const uint3& piece : pieces) {
                const uint32_t a = vertex(m.indices[first + piece.x]), b = vertex(m.indices[first + piece.y]);
                mesh.triangles.push_back(uint3(a, b, vertex(m.indices[first + piece.z])));
                mesh.triangle_materials.push_back(static_cast<uint32_t>(
                    want_mtl ? material_index[static_cast<size_t>(m.material_ids[f])] : scene_material));
            }
        }
    }
    if (mesh.normals_computed) compute_normals(mesh);

    if (!mesh.has_texcoords) {
        for (uint32_t id : std::set<uint32_t>(mesh.triangle_materials.begin(), mesh.triangle_materials.end())) {
            const Material& material = scene.materials[id];
            if (material.has_textures())
                material_json.fail(mesh.file + " has no texture coordinates (vt) on every face, which the textured material " +
                                   material.name + " needs");
        }
    }
    note_mesh_file(file_json, mesh.file, notes);
}

namespace {
constexpr std::string_view obj_extensions[] = {".obj"};
}

const MeshFormat obj_mesh_format{"OBJ", obj_extensions, load_obj_mesh};

} // namespace adjoint::app::detail

namespace adjoint::app {
void update_from_obj_positions(Mesh& mesh) {
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
        mesh.positions[v] = mesh.obj_positions[mesh.position_ids[v]];
        mesh.colors[v] = mesh.obj_colors[mesh.position_ids[v]];
    }
    if (mesh.normals_computed) detail::compute_normals(mesh);
}
} // namespace adjoint::app
