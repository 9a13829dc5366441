// The mesh formats a scene's `meshes[i].file` may name, one line each, picked by extension; the size they may read.
#include "scene/loading.h"
#include <adjoint/app/atomic_file.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace adjoint::app::detail {

namespace {

const MeshFormat* const formats[] = {&obj_mesh_format, &ply_mesh_format, &gltf_mesh_format};

// A triangle's normal is its edges' cross product, whose squared length float holds for edges up to about 4e9:
// a helper's triangle 6e9 across rendered with ambient light only, one 2e20 across not at all, nothing said.
// A mesh whose world box (scale and rotation applied) has a radius over 2e9 is refused.
void check_mesh_size(const JsonValue& entry, const Mesh& mesh) {
    const float4x4 placement = model_matrix(mesh.transform);
    BoundingBox box;
    box.add(mesh.positions, &placement);
    const float r = box.radius();
    if (!box.empty() && !(r <= 2e9f)) {
        std::ostringstream s;
        s << "its vertices lie " << std::setprecision(3);
        if (std::isfinite(r)) s << 2 * r;
        else s << "more than 3e38";   // their box's diagonal overflows float itself
        s << " scene units apart (its scale applied), beyond what a triangle's normal holds in float (4e9): scale "
             "it down";
        entry.fail(s.str());
    }
}

} // namespace

std::span<const MeshFormat* const> mesh_formats() { return formats; }

void load_mesh_geometry(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material,
                        Mesh& mesh, Scene& scene) {
    const std::string extension = lowercase_extension(mesh.file);
    std::string known;
    for (const MeshFormat* format : mesh_formats())
        for (std::string_view e : format->extensions) {
            if (e == extension) {
                format->load(entry, base_dir, scene_material, mesh, scene);
                return check_mesh_size(entry, mesh);
            }
            known += (known.empty() ? "" : ", ") + std::string(e);
        }
    entry.require("file").fail(mesh.file + ": not a mesh format Adjoint reads (by its extension: " + known + ")");
}

void note_mesh_file(const JsonValue& file_json, const std::string& mesh_file, const std::set<std::string>& notes) {
    for (const std::string& note : notes)
        std::cerr << "adjoint: note: " << file_json.file() << ": " << shown_path(file_json.path()) << ": " << mesh_file
                  << ": " << note << "\n";
}

} // namespace adjoint::app::detail
