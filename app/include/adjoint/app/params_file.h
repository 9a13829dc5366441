// params.json: the free parameters' final values (what adjoint-optimize writes, adjoint-render --params reads).
//
// Format:  {"parameters": {"<path>": {"value": [..], "true_value": [..], "error": x}}}
// with parameters in path order, fields in that order, "true_value"/"error" present only when known.
// A texture parameter has no "value" array: its image is written beside params.json as a PNG whose
// name is derived from the path (texture_file_name) and referenced by "texture": "<file>" (its true
// texture, when known, by "true_texture"). Numbers are written with the shortest text that reads back
// as the same float, so values round-trip exactly; textures go through 8-bit sRGB PNG.
#pragma once
#include <adjoint/app/image_io.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace adjoint::app {

struct ParamRecord {
    std::string path;                            // the scene format's path, e.g. "lights.key.position"
    std::vector<float> value;                    // empty for a texture parameter
    std::optional<std::vector<float>> true_value;
    std::optional<double> error;                 // the parameter error of scene-format.md, when known
    std::optional<Image> texture;                // a texture parameter's value
    std::optional<Image> true_texture;
    // A texture parameter's last gradient as a picture (report.h's gradient_picture), written beside it as
    // "<name>.grad.png" and named by "gradient_picture".
    std::optional<Image> gradient_picture;
    bool radiance = false;  // the textures hold linear radiance (an environment map): Radiance .hdr, not sRGB PNG
    // The textures hold data (is_data_texture: normals, metallic-roughness): PNG values as stored, not sRGB, as a
    // scene's texture files hold them (a run's output may be the next run's init). params.json says so
    // ("png_values": "stored"); a file that does not was written with sRGB PNGs.
    bool data = false;
};

// "materials.fur.albedo_texture" -> "materials.fur.albedo_texture.png" (and ".true.png" for the true
// texture); characters other than letters, digits, '.', '_' and '-' become '_'.
std::string texture_file_name(const std::string& path, bool true_texture = false, bool radiance = false);
// "materials.fur.albedo_texture" -> "materials.fur.albedo_texture.grad.png".
std::string gradient_file_name(const std::string& path);

// Writes `params_json` (atomically) and each texture beside it (first, so the JSON never names a file
// that is not there). adjoint::Error for duplicate paths, a record with both or neither of value and
// texture, or a write failure.
void write_params_json(const std::filesystem::path& params_json, const std::vector<ParamRecord>& records);

// The text write_params_json writes (no files touched).
std::string format_params_json(const std::vector<ParamRecord>& records);

// Reads a params.json written by write_params_json (or by hand in the same format: a single number is
// accepted for a one-element value), loading textures from its folder. Records come in path order. Top-level
// keys other than "parameters" are ignored (room for whatever else a run records); an entry takes only the
// keys above. adjoint::Error `<file>: <json path>: <what>`, paths as the scene loader writes them
// (`parameters["lights.key.color"].value[1]`). The one reader: adjoint-render --params goes through it too.
std::vector<ParamRecord> read_params_json(const std::filesystem::path& params_json);

} // namespace adjoint::app
