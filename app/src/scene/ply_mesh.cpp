// The PLY mesh format: ASCII and binary (both endians); positions, normals, colours and texture coordinates.
#include <adjoint/app/image_io.h>

#include "scene/loading.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <sstream>

namespace adjoint::app::detail {

namespace {

enum class Encoding { ascii, little, big };

// A scalar type of the format: its names and its size in bytes (0: unknown).
struct ScalarType {
    int bytes = 0;
    bool is_float = false, is_signed = false;
};

ScalarType scalar_type(std::string_view name) {
    if (name == "char" || name == "int8") return {1, false, true};
    if (name == "uchar" || name == "uint8") return {1, false, false};
    if (name == "short" || name == "int16") return {2, false, true};
    if (name == "ushort" || name == "uint16") return {2, false, false};
    if (name == "int" || name == "int32") return {4, false, true};
    if (name == "uint" || name == "uint32") return {4, false, false};
    if (name == "float" || name == "float32") return {4, true, true};
    if (name == "double" || name == "float64") return {8, true, true};
    return {};
}

struct Property {
    std::string name;
    ScalarType type;
    ScalarType count_type;   // a list's count type (bytes 0: not a list)
};

struct Element {
    std::string name;
    size_t count = 0;
    std::vector<Property> properties;
};

struct Header {
    Encoding encoding = Encoding::ascii;
    std::vector<Element> elements;
    size_t body = 0;   // the first byte after end_header's line
};

// Reads the body's scalars in the file's encoding; every read is bounds-checked and names what ran out.
class Body {
public:
    Body(const std::string& bytes, size_t at, Encoding encoding, const std::string& file, const JsonValue& where)
        : bytes_(bytes), at_(at), encoding_(encoding), file_(file), where_(where) {}

    double read(const ScalarType& t) {
        if (encoding_ == Encoding::ascii) return read_ascii(t);
        if (at_ + size_t(t.bytes) > bytes_.size()) fail("ends early");
        unsigned char raw[8];
        std::memcpy(raw, bytes_.data() + at_, size_t(t.bytes));
        at_ += size_t(t.bytes);
        const bool swap = (encoding_ == Encoding::big) == (std::endian::native == std::endian::little);
        if (swap) std::reverse(raw, raw + t.bytes);
        return decode(raw, t);
    }

    // A list's length, read as its count type: a signed one may hold a negative count, named with where it lies
    // (element e's item `item`, property p).
    size_t list_length(const ScalarType& t, const Element& e, size_t item, const Property& p) {
        const double n = read(t);
        if (n < 0)
            fail(e.name + " " + std::to_string(item) + ": its list " + p.name + " has a negative length (" +
                 detail::number_text(n) + ")");
        // An ASCII count may be written inf (size_t of inf is undefined: it read as 0 corners), a float one 2.5.
        if (!(n <= 4294967295.0) || n != std::floor(n))
            fail(e.name + " " + std::to_string(item) + ": its list " + p.name + " has a length that is not a count (" +
                 detail::number_text(n) + ")");
        return size_t(n);
    }

    // The end of element e's item `item`: in ASCII each item has a line of its own (it may wrap), and a line with
    // values past the header's properties is refused (they were read as the next item, and the real next line
    // dropped: a face too many, a face lost).
    void end_item(const Element& e, size_t item) {
        if (encoding_ != Encoding::ascii) return;
        while (at_ < bytes_.size() && (bytes_[at_] == ' ' || bytes_[at_] == '\t' || bytes_[at_] == '\r')) ++at_;
        if (at_ < bytes_.size() && bytes_[at_] != '\n')
            fail(e.name + " " + std::to_string(item) + ": its values and the header's properties do not line up "
                 "(a line holds more or fewer values than the header gives an item)");
        if (at_ < bytes_.size()) ++at_;
    }

    [[noreturn]] void fail(const std::string& what) const { where_.fail(file_ + ": " + what); }

private:
    static double decode(const unsigned char* raw, const ScalarType& t) {
        if (t.is_float) {
            if (t.bytes == 4) return double(std::bit_cast<float>(load<uint32_t>(raw)));
            return std::bit_cast<double>(load<uint64_t>(raw));
        }
        switch (t.bytes) {
        case 1: return t.is_signed ? double(int8_t(raw[0])) : double(raw[0]);
        case 2: return t.is_signed ? double(int16_t(load<uint16_t>(raw))) : double(load<uint16_t>(raw));
        default: return t.is_signed ? double(int32_t(load<uint32_t>(raw))) : double(load<uint32_t>(raw));
        }
    }
    template <typename T>
    static T load(const unsigned char* raw) {
        T v;
        std::memcpy(&v, raw, sizeof v);
        return v;
    }

    double read_ascii(const ScalarType& t) {
        while (at_ < bytes_.size() && std::isspace(static_cast<unsigned char>(bytes_[at_]))) ++at_;
        if (at_ >= bytes_.size()) fail("ends early");
        const char* first = bytes_.data() + at_;
        const char* last = bytes_.data() + bytes_.size();
        double v = 0;
        const auto [end, ec] = std::from_chars(first, last, v);
        if (ec != std::errc() || (end < last && !std::isspace(static_cast<unsigned char>(*end))))
            fail("expected a number at byte " + std::to_string(at_));
        if (!t.is_float && v != std::floor(v)) fail("expected an integer at byte " + std::to_string(at_));
        at_ = size_t(end - bytes_.data());
        return v;
    }

    const std::string& bytes_;
    size_t at_;
    Encoding encoding_;
    const std::string& file_;
    const JsonValue& where_;
};

// The header: `ply`, the format, elements and their properties, up to end_header.
Header read_header(const std::string& bytes, const std::string& file, const JsonValue& where) {
    Header h;
    size_t at = 0;
    bool format_seen = false;
    const auto bad = [&](const std::string& what) { where.fail(file + ": " + what); };
    for (int line_no = 1;; ++line_no) {
        const size_t end = bytes.find('\n', at);
        if (end == std::string::npos) bad("the header has no end_header line");
        std::string line = bytes.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::istringstream words(line);
        std::string word;
        words >> word;
        const std::string where_line = "header line " + std::to_string(line_no) + ": ";
        if (line_no == 1) {
            if (line != "ply") bad("not a PLY file (it does not start with \"ply\")");
            continue;
        }
        if (word == "end_header") break;
        if (word.empty() || word == "comment" || word == "obj_info") continue;
        if (word == "format") {
            std::string kind, version;
            words >> kind >> version;
            if (kind == "ascii") h.encoding = Encoding::ascii;
            else if (kind == "binary_little_endian") h.encoding = Encoding::little;
            else if (kind == "binary_big_endian") h.encoding = Encoding::big;
            else bad(where_line + "unknown format \"" + kind + "\"");
            if (version != "1.0") bad(where_line + "unsupported version \"" + version + "\" (1.0 is read)");
            format_seen = true;
        } else if (word == "element") {
            Element e;
            std::string count;
            words >> e.name >> count;
            const auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), e.count);
            if (e.name.empty() || ec != std::errc() || p != count.data() + count.size())
                bad(where_line + "expected \"element <name> <count>\"");
            h.elements.push_back(std::move(e));
        } else if (word == "property") {
            if (h.elements.empty()) bad(where_line + "a property before any element");
            Property p;
            std::string type;
            words >> type;
            if (type == "list") {
                std::string count_type, item_type;
                words >> count_type >> item_type;
                p.count_type = scalar_type(count_type);
                p.type = scalar_type(item_type);
                if (p.count_type.bytes == 0 || p.count_type.is_float || p.type.bytes == 0)
                    bad(where_line + "expected \"property list <integer type> <type> <name>\"");
            } else {
                p.type = scalar_type(type);
                if (p.type.bytes == 0) bad(where_line + "unknown property type \"" + type + "\"");
            }
            words >> p.name;
            if (p.name.empty()) bad(where_line + "a property without a name");
            h.elements.back().properties.push_back(std::move(p));
        } else {
            bad(where_line + "unknown keyword \"" + word + "\"");
        }
    }
    if (!format_seen) bad("the header has no format line");
    h.body = at;
    return h;
}

// The PLY vertex properties the mesh takes, by name; -1 where absent.
struct VertexColumns {
    int x = -1, y = -1, z = -1, nx = -1, ny = -1, nz = -1, r = -1, g = -1, b = -1, u = -1, v = -1;
    // Integer colours are display values over their type's full range (255 for uchar, 65535 for ushort); 0 for
    // float colours, which are linear.
    double integer_full = 0;

    explicit VertexColumns(const Element& e) {
        for (int i = 0; i < int(e.properties.size()); ++i) {
            const std::string& n = e.properties[size_t(i)].name;
            int* slot = n == "x" ? &x : n == "y" ? &y : n == "z" ? &z : n == "nx" ? &nx : n == "ny" ? &ny
                      : n == "nz" ? &nz : (n == "red" || n == "diffuse_red") ? &r
                      : (n == "green" || n == "diffuse_green") ? &g : (n == "blue" || n == "diffuse_blue") ? &b
                      : (n == "u" || n == "s" || n == "texture_u") ? &u
                      : (n == "v" || n == "t" || n == "texture_v") ? &v : nullptr;
            if (slot) *slot = i;
        }
        if (r >= 0 && !e.properties[size_t(r)].type.is_float) {
            const ScalarType& t = e.properties[size_t(r)].type;
            integer_full = std::ldexp(1.0, 8 * t.bytes - (t.is_signed ? 1 : 0)) - 1;
        }
    }
};

// A binary element of N items needs at least N bytes: a count past the file is refused before any allocation.
void check_count(const Header& h, const Element& e, size_t file_size, const Body& body) {
    const size_t least = h.encoding == Encoding::ascii ? 2 : 1;   // ASCII: a digit and a separator
    if (e.count > file_size / least) body.fail("element " + e.name + " claims " + std::to_string(e.count) +
                                               " items, more than the file holds");
}

void read_vertices(const Element& e, Body& body, Mesh& mesh, std::vector<bool>& normal_given) {
    const VertexColumns c(e);
    if (c.x < 0 || c.y < 0 || c.z < 0) body.fail("the vertex element has no x, y and z");
    for (const Property& p : e.properties)
        if (p.count_type.bytes) body.fail("the vertex element has a list property (" + p.name + ")");
    const bool normals = c.nx >= 0 && c.ny >= 0 && c.nz >= 0;
    mesh.has_colors = c.r >= 0 && c.g >= 0 && c.b >= 0;
    mesh.has_texcoords = c.u >= 0 && c.v >= 0;
    std::vector<double> row(e.properties.size());
    for (size_t i = 0; i < e.count; ++i) {
        for (size_t k = 0; k < row.size(); ++k) row[k] = body.read(e.properties[k].type);
        body.end_item(e, i);
        // Braces: with parentheses clang reads this as a function declaration (float row[...] parameters).
        const float3 p{float(row[size_t(c.x)]), float(row[size_t(c.y)]), float(row[size_t(c.z)])};
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
            body.fail("vertex " + std::to_string(i) + " has a position that is not a finite float");
        mesh.obj_positions.push_back(p);
        const float3 n = normals ? float3(float(row[size_t(c.nx)]), float(row[size_t(c.ny)]), float(row[size_t(c.nz)]))
                                 : float3(0.0f);
        normal_given.push_back(normals && std::isfinite(length(n)) && length(n) > 0);
        mesh.normals.push_back(normal_given.back() ? normalize(n) : float3(0, 0, 1));
        float3 color(1.0f);
        if (mesh.has_colors) {   // integer colours are display (sRGB) values; float colours are linear
            for (int k = 0; k < 3; ++k) {
                const double x = row[size_t(k == 0 ? c.r : k == 1 ? c.g : c.b)];
                color[k] = c.integer_full > 0 ? srgb_to_linear(float(x / c.integer_full)) : float(x);
            }
            if (!(color.x >= 0 && color.y >= 0 && color.z >= 0))
                body.fail("vertex " + std::to_string(i) + " has a colour below 0 or not a number");
        }
        mesh.obj_colors.push_back(color);
        mesh.texcoords.push_back(mesh.has_texcoords ? float2(float(row[size_t(c.u)]), 1.0f - float(row[size_t(c.v)]))
                                                    : float2(0.0f));
    }
}

// Faces as triangles (triangulate_polygon); every other property of the element (and every other element) is read
// past.
void read_faces(const Element& e, Body& body, Mesh& mesh, uint32_t material) {
    int indices = -1;
    for (int i = 0; i < int(e.properties.size()); ++i) {
        const Property& p = e.properties[size_t(i)];
        if ((p.name == "vertex_indices" || p.name == "vertex_index") && p.count_type.bytes) indices = i;
    }
    if (indices < 0) body.fail("the face element has no vertex_indices list");
    std::vector<uint32_t> corners;
    std::vector<float3> polygon;
    std::vector<uint3> pieces;
    for (size_t f = 0; f < e.count; ++f) {
        for (int k = 0; k < int(e.properties.size()); ++k) {
            const Property& p = e.properties[size_t(k)];
            const size_t n = p.count_type.bytes ? body.list_length(p.count_type, e, f, p) : 1;
            if (k != indices) {
                for (size_t i = 0; i < n; ++i) body.read(p.type);
                continue;
            }
            if (n < 3) body.fail("face " + std::to_string(f) + " has " + std::to_string(n) + " corners (3 or more)");
            if (n > max_face_corners)
                body.fail("face " + std::to_string(f) + " has " + std::to_string(n) + " corners (at most " +
                          std::to_string(max_face_corners) + ")");
            corners.clear();
            for (size_t i = 0; i < n; ++i) {
                const double v = body.read(p.type);
                // A float list type may hold a fraction (it was truncated to a vertex).
                if (!(v >= 0 && v < double(mesh.obj_positions.size()) && v == std::floor(v)))
                    body.fail("face " + std::to_string(f) + " refers to vertex " + number_text(v) + " of " +
                              std::to_string(mesh.obj_positions.size()));
                corners.push_back(uint32_t(v));
            }
            // In the face's own plane, concave ones too (triangulate_polygon), as OBJ faces are.
            polygon.clear();
            pieces.clear();
            for (uint32_t c : corners) polygon.push_back(mesh.obj_positions[c]);
            triangulate_polygon(polygon, pieces);
            for (const uint3& t : pieces) {
                mesh.triangles.push_back(uint3(corners[t.x], corners[t.y], corners[t.z]));
                mesh.triangle_materials.push_back(material);
            }
        }
        body.end_item(e, f);
    }
}

void skip_element(const Element& e, Body& body) {
    for (size_t i = 0; i < e.count; ++i) {
        for (const Property& p : e.properties) {
            const size_t n = p.count_type.bytes ? body.list_length(p.count_type, e, i, p) : 1;
            for (size_t k = 0; k < n; ++k) body.read(p.type);
        }
        body.end_item(e, i);
    }
}

void load_ply_mesh(const JsonValue& entry, const std::filesystem::path& base_dir, int scene_material, Mesh& mesh,
                   Scene& scene) {
    const JsonValue file_json = entry.require("file");
    const JsonValue material_json = entry.require("material");
    if (scene_material == mtl_materials)
        material_json.fail("\"mtl\" names an OBJ's MTL materials; " + mesh.file + " is PLY: name one of `materials`");
    if (scene_material == gltf_materials)
        material_json.fail("\"gltf\" names a glTF file's materials; " + mesh.file + " is PLY: name one of `materials`");
    const std::string bytes = read_file(base_dir / mesh.file, mesh.file, file_json);
    const Header header = read_header(bytes, mesh.file, file_json);
    Body body(bytes, header.body, header.encoding, mesh.file, file_json);
    bool vertices_read = false;
    std::vector<bool> normal_given;
    for (const Element& e : header.elements) {
        check_count(header, e, bytes.size(), body);
        if (e.name == "vertex") {
            read_vertices(e, body, mesh, normal_given);
            vertices_read = true;
        } else if (e.name == "face") {
            if (!vertices_read) body.fail("the face element comes before the vertex element");
            read_faces(e, body, mesh, uint32_t(scene_material));
        } else {
            skip_element(e, body);
        }
    }
    if (mesh.triangles.empty()) {
        const bool strips = std::any_of(header.elements.begin(), header.elements.end(),
                                        [](const Element& e) { return e.name == "tristrips"; });
        file_json.fail(mesh.file + " has no faces" +
                       (strips ? " (its tristrips element is not read: faces only)" : ""));
    }
    // One vertex per PLY vertex: the "OBJ positions" the vertex parameters address are the PLY's vertices.
    mesh.positions = mesh.obj_positions;
    mesh.colors = mesh.obj_colors;
    mesh.position_ids.resize(mesh.positions.size());
    for (size_t i = 0; i < mesh.position_ids.size(); ++i) mesh.position_ids[i] = uint32_t(i);
    mesh.normals_computed = std::find(normal_given.begin(), normal_given.end(), false) != normal_given.end();
    if (mesh.normals_computed) compute_normals(mesh);
    if (!mesh.has_texcoords && scene.materials[size_t(scene_material)].has_textures())
        material_json.fail(mesh.file + " has no texture coordinates (u v or s t), which the textured material " +
                           scene.materials[size_t(scene_material)].name + " needs");
}

constexpr std::string_view ply_extensions[] = {".ply"};

} // namespace

const MeshFormat ply_mesh_format{"PLY", ply_extensions, load_ply_mesh};

} // namespace adjoint::app::detail
