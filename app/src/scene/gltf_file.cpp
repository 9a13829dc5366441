// A glTF 2.0 file (.gltf with external or data-URI buffers, or .glb) parsed by tinygltf into its model, with
// Adjoint's file reading and errors: unsupported required extensions and other versions refused first.
#include "scene/gltf.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace adjoint::app::detail::gltf {

namespace {

// Required extensions the loader honours: quantized attributes are read at any component type.
constexpr std::string_view readable_required[] = {"KHR_mesh_quantization"};

// tinygltf reads external buffers and images through these, so that they go through Adjoint's file reading
// (regular files, size limit, "cannot read <file>: <reason>") and stay relative to the glTF's folder.
struct Files {
    Source* source;
    std::string first_failure;
    std::string last_shown;   // the last file read, as shown, and its size (for tinygltf's size mismatch)
    size_t last_size = 0;
};

// Every path tinygltf tries is the glTF's folder joined with the URI first: claiming it exists makes that the
// one it reads, and the read says why not (tinygltf would next try the working directory).
bool claim_exists(const std::string&, void*) { return true; }
std::string no_expansion(const std::string& path, void*) { return path; }   // no ~ or $VAR
bool refuse_write(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
    if (err) *err = "writing is not done here";
    return false;
}

bool read_whole(std::vector<unsigned char>* out, std::string* err, const std::string& path, void* user) {
    Files& files = *static_cast<Files*>(user);
    const Source& source = *files.source;
    // tinygltf joins the folder and the URI with '/': show it relative to the scene instead.
    std::string shown = path;
    const std::string folder = source.folder.string();
    if (shown.rfind(folder, 0) == 0) {
        shown = shown.substr(folder.size());
        while (!shown.empty() && shown.front() == '/') shown.erase(0, 1);
        shown = (std::filesystem::path(source.shown_folder) / shown).lexically_normal().string();
    }
    std::string reason;
    std::optional<std::string> bytes = try_read_file(path, shown, reason);
    if (!bytes) {
        if (files.first_failure.empty()) files.first_failure = reason;
        if (err) *err = reason;
        return false;
    }
    out->assign(bytes->begin(), bytes->end());
    files.last_shown = shown;
    files.last_size = bytes->size();
    return true;
}

// Images are decoded by the scene's own decoder (16-bit PNGs, its size limit, its messages), later and only
// when a material uses them: tinygltf keeps the encoded bytes of data URIs (whose uri it leaves empty); files
// are read again by image_bytes, from their URI as RFC 3986 reads it. Buffer-view images are
// left to be read from the checked buffer view, since tinygltf hands them over without checking its bounds.
bool keep_encoded(tinygltf::Image* image, const int, std::string*, std::string*, int, int, const unsigned char* bytes,
                  int size, void*) {
    if (image->bufferView < 0 && image->uri.empty() && bytes && size > 0) image->image.assign(bytes, bytes + size);
    return true;
}

std::string first_line(std::string text) {
    text = text.substr(0, text.find('\n'));
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
    // tinygltf quotes a data URI whole: a line of a megabyte.
    if (text.size() > 300) text = text.substr(0, 200) + "... (" + std::to_string(text.size()) + " characters)";
    return text.empty() ? "tinygltf could not read it" : text;
}

// " (N)" from tinygltf's "requestedBytes N", or "" where it says otherwise.
std::string requested_bytes(const std::string& err) {
    const size_t at = err.find("requestedBytes ");
    if (at == std::string::npos) return "";
    const size_t begin = at + 15, end = err.find_first_not_of("0123456789", begin);
    return end > begin ? " (" + err.substr(begin, end - begin) + ")" : "";
}

uint32_t le32(const std::string& bytes, size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
}

// The JSON text of a .gltf, or of a .glb's first chunk; empty when the container is broken (tinygltf says how).
std::string json_text(const std::string& bytes, bool binary) {
    if (!binary) return bytes;
    if (bytes.size() < 20 || le32(bytes, 16) != 0x4E4F534Au) return {};   // "JSON"
    const uint32_t length = le32(bytes, 12);
    return length <= bytes.size() - 20 ? bytes.substr(20, length) : std::string();
}

// Whether a URI begins with a scheme (RFC 3986: a letter, then letters, digits, '+', '-' or '.', then ':'), of two
// characters at least: "C:/..." is a Windows path, left to be read (and not found) as a file.
bool has_scheme(const std::string& uri) {
    const size_t colon = uri.find(':');
    if (colon == std::string::npos || colon < 2 || !std::isalpha(static_cast<unsigned char>(uri[0]))) return false;
    for (size_t i = 1; i < colon; ++i) {
        const unsigned char c = static_cast<unsigned char>(uri[i]);
        if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return false;
    }
    return true;
}

// What must be refused before tinygltf parses: a file it would half-read or misreport (a Draco-compressed
// mesh has accessors without buffer views) because it needs an extension Adjoint does not read, another
// major version, or a member of the wrong type (which tinygltf reads as absent).
void check_before_parsing(const std::string& bytes, bool binary, Source& source) {
    // A glTF 1.0 .glb (KHR_binary_glTF) has container version 1, which tinygltf calls "Invalid glTF binary".
    if (binary && bytes.size() >= 8 && le32(bytes, 4) != 2)
        source.fail("a glTF binary of container version " + std::to_string(le32(bytes, 4)) +
                    " (Adjoint reads glTF 2.0, version 2)");
    // The container's header and first chunk, which tinygltf calls "Invalid glTF binary." or "Too short data size"
    // alike: a cut file says so.
    const std::string size = std::to_string(bytes.size());
    if (binary && bytes.size() < 20)
        source.fail("a glTF binary of " + size + " bytes, shorter than its header and first chunk's (20 bytes)");
    if (binary && le32(bytes, 8) > bytes.size())
        source.fail("a glTF binary of " + size + " bytes whose header gives " + std::to_string(le32(bytes, 8)) +
                    " (the file is cut short)");
    if (binary && le32(bytes, 16) != 0x4E4F534Au)   // "JSON"
        source.fail("a glTF binary whose first chunk is not its JSON");
    if (binary && le32(bytes, 12) > bytes.size() - 20)
        source.fail("a glTF binary of " + size + " bytes whose JSON chunk of " + std::to_string(le32(bytes, 12)) +
                    " bytes runs past its end (the file is cut short)");
    // tinygltf says "JSON string too short." of an empty file.
    if (!binary && bytes.find_first_not_of(" \t\r\n") == std::string::npos)
        source.fail("is empty (" + size + " bytes): not a glTF file");
    const Json json = Json::parse(json_text(bytes, binary), nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return;   // tinygltf names the parse error
    // Buffers and images are files beside the glTF or data URIs; tinygltf would join a URL to the folder ("cannot
    // read http:/...").
    for (const char* list : {"buffers", "images"}) {
        const auto items = json.find(list);
        if (items == json.end() || !items->is_array()) continue;
        for (size_t i = 0; i < items->size(); ++i) {
            const Json& item = (*items)[i];
            const auto uri = item.is_object() ? item.find("uri") : item.end();
            if (!item.is_object() || uri == item.end() || !uri->is_string()) continue;
            const std::string u = uri->get<std::string>();
            if (has_scheme(u) && u.rfind("data:", 0) != 0)
                source.fail(std::string(list) + "[" + std::to_string(i) + "].uri: " + u.substr(0, 200) +
                            " is a URL; Adjoint reads files beside the glTF (relative URIs) and data URIs");
        }
    }
    if (const auto asset = json.find("asset"); asset != json.end() && asset->is_object()) {
        const auto version = asset->find("version");
        if (version != asset->end() && version->is_string()) {
            const std::string v = version->get<std::string>();
            if (v.rfind("2.", 0) != 0) source.fail("glTF version " + v + " (Adjoint reads glTF 2.0)");
        }
        // Some glTF 1.0 exporters wrote the version as a number (CesiumMilkTruck's 1): still glTF 1.0.
        if (version != asset->end() && version->is_number() && version->get<double>() < 2)
            source.fail("glTF version " + version->dump() + " (Adjoint reads glTF 2.0)");
    }
    if (const auto required = json.find("extensionsRequired"); required != json.end() && required->is_array())
        for (const Json& e : *required) {
            if (!e.is_string()) source.fail("extensionsRequired holds something other than a name");
            const std::string name = e.get<std::string>();
            if (std::find(std::begin(readable_required), std::end(readable_required), name) ==
                std::end(readable_required))
                source.fail("requires the extension " + name +
                            ", which Adjoint does not read (of required extensions it reads KHR_mesh_quantization)");
        }
    // After the version (glTF 1.0's schema differs) and the extensions (a Draco file is refused as such).
    check_schema(json, source);
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

// A relative URI reference as glTF writes a file's name (RFC 3986): percent escapes decoded (Blender writes a
// space as %20), a query or fragment dropped (they name no part of a file); a '%' without two hex digits, or
// %00 (which would end the name early), stays as written. tinygltf 2.7 reads '+' as a space, keeps the
// fragment, and makes a byte of any '%' and the two characters after it.
std::string uri_path(const std::string& uri) {
    std::string out;
    for (size_t i = 0; i < uri.size() && uri[i] != '#' && uri[i] != '?'; ++i) {
        const int byte = uri[i] == '%' && i + 2 < uri.size() && hex_digit(uri[i + 1]) >= 0 && hex_digit(uri[i + 2]) >= 0
                             ? hex_digit(uri[i + 1]) * 16 + hex_digit(uri[i + 2])
                             : 0;
        if (byte > 0) {
            out.push_back(char(byte));
            i += 2;
        } else {
            out.push_back(uri[i]);
        }
    }
    return out;
}

} // namespace

tinygltf::Model parse_file(const std::filesystem::path& path, Source& source) {
    const std::string bytes = read_file(path, source.shown, source.where);
    // A .glb starts with the magic "glTF"; anything else is read as JSON, whatever the extension says.
    const bool binary = bytes.size() >= 4 && bytes.compare(0, 4, "glTF") == 0;
    check_before_parsing(bytes, binary, source);
    Files files{&source, {}, {}, 0};
    tinygltf::TinyGLTF loader;
    loader.SetFsCallbacks({claim_exists, no_expansion, read_whole, refuse_write, &files});
    loader.SetImageLoader(keep_encoded, nullptr);
    tinygltf::Model model;
    std::string err, warn;
    const std::string folder = source.folder.empty() ? std::string(".") : source.folder.string();
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    const bool ok = binary ? loader.LoadBinaryFromMemory(&model, &err, &warn, data, unsigned(bytes.size()), folder)
                           : loader.LoadASCIIFromString(&model, &err, &warn, bytes.data(), unsigned(bytes.size()), folder);
    if (!ok && files.first_failure.empty() && err.find("File size mismatch") != std::string::npos &&
        !files.last_shown.empty())
        // tinygltf: "File size mismatch : <path>, requestedBytes N, but got M".
        source.fail(files.last_shown + " holds " + std::to_string(files.last_size) +
                    " bytes, not the byteLength its buffer gives" + requested_bytes(err));
    if (!ok) source.fail(files.first_failure.empty() ? first_line(err) : files.first_failure);
    if (model.asset.version.rfind("2.", 0) != 0)
        source.fail("glTF version \"" + model.asset.version + "\" (Adjoint reads glTF 2.0)");
    return model;
}

std::string image_bytes(const tinygltf::Model& model, int index, std::string& shown, Source& source) {
    const tinygltf::Image& image = model.images[size_t(index)];
    const std::string name = "image " + std::to_string(index);
    if (image.bufferView >= 0) {
        shown = source.shown + " " + name;
        if (size_t(image.bufferView) >= model.bufferViews.size())
            source.fail(name + ": buffer view " + std::to_string(image.bufferView) + " does not exist");
        const tinygltf::BufferView& view = model.bufferViews[size_t(image.bufferView)];
        const unsigned char* p = checked_bytes(model, image.bufferView, 0, view.byteLength, 1, 1, name, source);
        return std::string(reinterpret_cast<const char*>(p), view.byteLength);
    }
    if (image.uri.empty()) {   // a data URI, which tinygltf decodes without keeping it, or a uri of ""
        shown = source.shown + " " + name;
        if (image.image.empty()) source.fail(name + ": its uri is empty");
        return std::string(image.image.begin(), image.image.end());
    }
    // A file: read here, its URI decoded as above, whatever tinygltf made of it (it reads images only to warn);
    // under the glTF's folder, as tinygltf joins it, even where the URI begins with '/'.
    std::string file = uri_path(image.uri);
    while (!file.empty() && file.front() == '/') file.erase(0, 1);
    shown = (std::filesystem::path(source.shown_folder) / file).lexically_normal().string();
    std::string reason;
    std::optional<std::string> bytes = try_read_file(source.folder / file, shown, reason);
    if (!bytes) source.fail(name + ": " + reason);
    return std::move(*bytes);
}

} // namespace adjoint::app::detail::gltf
