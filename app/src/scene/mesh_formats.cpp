// The mesh formats a scene's `meshes[i].file` may name, one line each; the loader picks one by extension.
#include "scene/loading.h"
#include <adjoint/app/atomic_file.h>

#include <algorithm>
#include <cctype>
#include <iostream>

namespace adjoint::app::detail {

namespace {
const MeshFormat* const formats[] = {&obj_mesh_format, &ply_mesh_format, &gltf_mesh_format};
}

std::span<const MeshFormat* const> mesh_formats() { return formats; }

void load_mesh_geometry(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material,
                        Mesh& mesh, Scene& scene) {
    const std::string extension = lowercase_extension(mesh.file);
    std::string known;
    for (const MeshFormat* format : mesh_formats())
        for (std::string_view e : format->extensions) {
            if (e == extension) return format->load(entry, base_dir, scene_material, mesh, scene);
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
