// The scene loader's internal steps, shared by the files of app/src/scene (not installed).
#pragma once
#include "scene/json_value.h"
#include <adjoint/app/plugins.h>
#include <adjoint/app/scene.h>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace adjoint::app::detail {

// The whole file, or nullopt and reason = "cannot read <shown>: <strerror>".
std::optional<std::string> try_read_file(const std::filesystem::path& path, const std::string& shown,
                                         std::string& reason);
// The whole file, or SceneError at `where` with that reason.
std::string read_file(const std::filesystem::path& path, const std::string& shown, const JsonValue& where);

// A PNG/JPEG (8 or 16 bits, 1..4 channels) as linear RGBA, or SceneError at `where` naming `shown`.
LinearImage load_image(const std::filesystem::path& path, const std::string& shown, const JsonValue& where);
// The same from the file's bytes (an image inside another file: a glTF's data URI or buffer view).
LinearImage decode_image(const std::string& bytes, const std::string& shown, const JsonValue& where);

// A PNG/JPEG decoded from sRGB back to the values it stores (a data texture: metallic-roughness, normals).
void as_stored(LinearImage& image);
// A material property's value in the file: [r, g, b] >= 0, or a number in the property's file range.
std::vector<float> read_property(const JsonValue& value, const MaterialProperty& property);
// materials.<name> (an object): its model's keys, textures loaded into the scene's.
Material read_material(const JsonValue& entry, const std::string& name, const std::filesystem::path& base_dir,
                       Scene& scene);

// meshes[i] (already checked to be an object): reads its OBJ (and MTL when `scene_material` < 0) into
// `mesh`, appending the MTL materials and their textures to the scene.
// A mesh file format: the extensions it claims (lower case, with the dot) and its loader, which fills the
// mesh's geometry (and, for a mesh whose material is "mtl" or "gltf", the scene's materials) from the entry's
// `file`. scene_material: a material of `materials`, or one of the two below.
struct MeshFormat {
    std::string_view name;
    std::span<const std::string_view> extensions;
    void (*load)(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material, Mesh& mesh,
                 Scene& scene);
};
inline constexpr int mtl_materials = -1;    // "material": "mtl": the OBJ's MTL materials
inline constexpr int gltf_materials = -2;   // "material": "gltf": the glTF file's materials
// The formats, one file each, listed in mesh_formats.cpp.
std::span<const MeshFormat* const> mesh_formats();
extern const MeshFormat obj_mesh_format;   // obj_mesh.cpp
extern const MeshFormat ply_mesh_format;   // ply_mesh.cpp
extern const MeshFormat gltf_mesh_format;  // gltf_mesh.cpp

// The mesh's geometry by the format its file's extension names (an extension no format claims is an error
// on `file`). scene_material: the index of the scene material its faces use, or mtl_materials / gltf_materials.
void load_mesh_geometry(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material,
                        Mesh& mesh, Scene& scene);
// Prints what a mesh file's reader left out ("adjoint: note: <scene>: <json path>: <mesh file>: <note>", on
// stderr): the file loads, but not all of it.
void note_mesh_file(const JsonValue& file_json, const std::string& mesh_file, const std::set<std::string>& notes);
// A face has at most this many corners (triangulating one takes time faster than linear in them).
inline constexpr size_t max_face_corners = 1024;
// OBJ text refused before tinyobjloader reads it (SceneError at `where`, "<shown> line N: <what>"): a `v`, `vt`
// or `vn` line without its coordinates as finite numbers, a face over max_face_corners, a face index past the
// positions, texture coordinates or normals. Returns the corner count of each face of 3 corners or more, in
// the file's order: tinyobjloader keeps a face's count in a byte, which a face over 255 corners overflows.
std::vector<uint32_t> check_obj_text(std::string_view text, const std::string& shown, const JsonValue& where);
// A polygon's triangles, as indices of its corners (a mesh file's face of 3 or more corners, in order), appended
// to `triangles`: ears clipped in the plane that fits it best (Newell's normal), each triangle winding as the
// polygon does. A convex quad is split as tinyobjloader split it, any other convex polygon is a fan from its first
// corner; a polygon with no area is such a fan too, and one that crosses itself is fanned where no ear is left
// (n - 2 triangles whatever the shape: the faces of a file that loaded before still load).
void triangulate_polygon(std::span<const float3> corners, std::vector<uint3>& triangles);
// MTL text's first problem ("<shown> line N: <what>"), or "": a Kd, Ks, Ka or Ke that is not one or three
// finite numbers >= 0, an Ns that is not one, a material name given twice by newmtl.
std::string check_mtl_text(std::string_view text, const std::string& shown);
// OBJ or MTL text rewritten so that tinyobjloader reads it as the files' writers meant, line for line: a
// material's name is the rest of its `usemtl` or `newmtl` line, trimmed ("Material #25", as 3ds Max writes),
// and its spaces and tabs are encoded so that tinyobjloader, which reads one word after usemtl but the rest
// of the line after newmtl, reads the same name in both (material_name_from_tinyobj decodes it); in MTL text a
// colour given as one number is grey, as the MTL format says (tinyobjloader would read "Kd 0.5" as red); in
// OBJ text an mtllib's backslashes are slashes (tinyobjloader would drop them), except "\ " (a space).
std::string obj_text_for_tinyobj(std::string_view text);
std::string mtl_text_for_tinyobj(std::string_view text);
std::string material_name_from_tinyobj(std::string name);
// Why faces of OBJ text `text` have no material of `names` (its MTL files' materials, decoded): "<shown> line N:
// usemtl <name> names no material of its MTL files (<names>)", or faces before any usemtl.
std::string unknown_usemtl(std::string_view text, const std::vector<std::string>& names, const std::string& shown);
// `name`, a texture path an MTL gives relative to `folder`, with its backslashes read as slashes when it has
// some and no file is there by the name as written (files written on Windows: "map_Kd .\wood.jpg").
std::string windows_path(const std::filesystem::path& folder, const std::string& name);
// Area-weighted normals per OBJ position, copied to the unified vertices.
void compute_normals(Mesh& mesh);

// N views around the camera's target (see scene.h).
std::vector<Camera> orbit_views(const Camera& camera, uint32_t count, float elevation_lo, float elevation_hi);
// The camera's elevation above the plane orthogonal to `up`, degrees.
float camera_elevation(const Camera& camera);

// `camera`, or an entry of `views` when `base` is the main camera (its values are the defaults). pose_optional:
// eye and target may be left out (the main camera of a scene whose views come from a dataset).
Camera read_camera(const JsonValue& value, const Camera* base, bool pose_optional = false);
// `views`: a list of cameras, an orbit, or a dataset (a view source); fills scene.views and, for a
// dataset, scene.view_images. The main camera must have been read.
void read_views(const JsonValue& value, const std::filesystem::path& base_dir, Scene& scene);
// A 4×4 camera-to-world matrix (rows; OpenGL: the camera looks down −Z, +Y up) as the camera's eye, target
// (eye − Z, one unit ahead) and up (Y); "" or why it is not a camera pose (not a rotation and translation).
std::string pose_from_matrix(const double (&rows)[4][4], Camera& camera);

// A dataset of posed images that `views` may name by its key: {"nerf": "transforms.json"}, {"colmap": ...}.
// `read` gives the views at the camera's resolution (intrinsics scaled to it) and each one's image file
// (relative to the scene's folder); errors name the scene's JSON path and the dataset's file and line or entry.
struct ViewSource {
    std::string_view key;
    std::span<const std::string_view> extra_keys; // other keys of its object ("images")
    void (*read)(const JsonValue& value, const std::filesystem::path& base_dir, const Camera& camera,
                 std::vector<Camera>& views, std::vector<ViewImage>& images);
};
// The view sources, one file each, listed in view_sources.cpp.
std::span<const ViewSource* const> view_sources();
extern const ViewSource nerf_view_source;    // views_nerf.cpp
extern const ViewSource colmap_view_source;  // views_colmap.cpp

// Target images as the loss sees them: `image` composited over `background` (alpha kept: the silhouette
// loss's target), then box-filtered to width × height when it has another size.
void composite_over(LinearImage& image, float3 background);
// Each output pixel is the area-weighted mean of the input pixels its footprint covers (exact for any
// ratio, up or down); alpha is filtered like the colours.
LinearImage resample_box(const LinearImage& image, uint32_t width, uint32_t height);
// A texture at another size as the renderer would show it there, per axis: shrunk, box-filtered (as its mip chain
// averages); enlarged, sampled bilinearly at the new texels' centres (as the renderer samples it), repeating
// across its edges. An `environment` map's rows span latitudes: shrunk, each weighs by the solid angle it covers
// (a row at a pole covers less of the sphere than one at the equator); enlarged, they are clamped at the poles.
LinearImage resample_texture(const LinearImage& image, uint32_t width, uint32_t height, bool environment);

// A rotation value as in a mesh's `rotation`: {"axis": [x, y, z], "angle": degrees} or {"quaternion": [w, x, y, z]}.
Quaternion read_rotation(const JsonValue& value);
// A scale value: a number or [x, y, z], no component zero.
float3 read_scale(const JsonValue& value);

// optimize.parameters: every entry resolved against the scene and checked.
std::vector<Parameter> read_parameters(const JsonValue& parameters, const std::filesystem::path& base_dir,
                                       const Scene& scene);
// glTF materials that use one image with the same factors share one scene texture (gltf_materials.cpp): a write
// to one material's texture changed every other's with it. own_texture gives the material's texture slot a copy
// of its own where another uses it (the parameters' writes take it), and returns its index; unshare_free_textures
// does so for each free material texture at load, so that the truth and the start scene agree on them.
uint32_t own_texture(Scene& scene, uint32_t material, uint32_t texture);
void unshare_free_textures(Scene& scene, const std::vector<Parameter>& ps);
// With the scene as the target its values are the truths: SceneError at `parameters` where one lies outside the
// range the optimizer keeps its parameter in (a shininess of 5000 ended at 23, its error never falling, exit 0).
void check_truths_reachable(const JsonValue& parameters, const Scene& scene, const std::vector<Parameter>& ps);

// Small vector helpers.
float dot(float3 a, float3 b);
float3 cross(float3 a, float3 b);
float length(float3 a);
float3 normalize(float3 a);
float3 operator-(float3 a, float3 b);
float3 operator+(float3 a, float3 b);
float3 operator*(float3 a, float s);
// Component r of m · (p, 1) (m column-major, as model_matrix and view_projection_matrix give it).
inline float transformed(const float4x4& m, const float3& p, size_t r) {
    return m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r];
}

// The axis-aligned box around points, each taken through `placement` (a model matrix; none: as they are). Empty
// (lo > hi) before any point.
struct BoundingBox {
    float3 lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
    void add(const std::vector<float3>& points, const float4x4* placement = nullptr);
    bool empty() const { return !(lo[0] <= hi[0]); }
    float radius() const;   // of the sphere through its corners; 0 when empty
};

} // namespace adjoint::app::detail
