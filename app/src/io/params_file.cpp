// params.json writer and reader (final parameter values, true values, errors, textures beside it).
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/params_file.h>

#include "io/hdr_image.h"
#include <adjoint/core/error.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace adjoint::app {
namespace {

using Json = nlohmann::ordered_json;

// The double whose shortest text is the float's shortest text, so the JSON shows "0.1", not
// "0.10000000149011612", and reading it back as a float gives the same float.
double float_as_short_double(float v) {
    char buf[64];
    auto w = std::to_chars(buf, buf + sizeof buf, v);
    double d = 0.0;
    std::from_chars(buf, w.ptr, d);
    return d;
}

Json float_array(const std::vector<float>& values, const std::string& where) {
    Json array = Json::array();
    for (size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) fail("params.json: ", where, "[", i, "] is not finite (", values[i], ")");
        array.push_back(float_as_short_double(values[i]));
    }
    return array;
}

std::vector<const ParamRecord*> sorted_checked(const std::vector<ParamRecord>& records) {
    std::vector<const ParamRecord*> sorted;
    for (const ParamRecord& r : records) sorted.push_back(&r);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->path < b->path; });
    for (size_t i = 0; i < sorted.size(); ++i) {
        const ParamRecord& r = *sorted[i];
        if (r.path.empty()) fail("params.json: a parameter has an empty path");
        if (i > 0 && sorted[i - 1]->path == r.path) fail("params.json: parameter ", r.path, " is given twice");
        if (r.texture.has_value() == !r.value.empty())
            fail("params.json: parameter ", r.path, " needs either a value or a texture, not ",
                 r.texture ? "both" : "neither");
        if (r.true_texture && !r.texture) fail("params.json: parameter ", r.path, " has a true texture but no texture");
    }
    return sorted;
}

// `parent.key`, or `parent["key"]` when the key is not a plain name: a parameter path holds dots, so its
// entry reads `parameters["lights.key.color"]`, as the scene loader names JSON paths.
std::string child_path(const std::string& parent, const std::string& key) {
    bool plain = !key.empty();
    for (char c : key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
    return plain ? parent + "." + key : parent + "[" + Json(key).dump() + "]";
}

// A texture beside params.json; errors name it as the file does, at its JSON path.
Image read_texture(const std::filesystem::path& folder, const std::string& name, const std::string& what,
                   const std::string& where) {
    std::string bytes;
    try {
        bytes = read_file(folder / name);
    } catch (const Error& e) {
        // "cannot read <folder/name>: <reason>": the reason, with the name as params.json gives it.
        const std::string message = e.what(), full = (folder / name).string();
        const size_t reason = message.find(full + ": ");
        fail(what, ": ", where, ": cannot read ", name, ": ",
             reason == std::string::npos ? message : message.substr(reason + full.size() + 2));
    }
    try {
        if (name.ends_with(".hdr")) return read_hdr_image(folder / name, 16384);   // radiance; sizes checked later
        return decode_image_linear(bytes, name);
    } catch (const Error& e) {
        fail(what, ": ", where, ": ", e.what());
    }
}

std::vector<float> read_floats(const Json& j, const std::string& what, const std::string& where) {
    std::vector<float> values;
    auto number = [&](const Json& n, const std::string& at) {
        if (!n.is_number()) fail(what, ": ", at, ": expected a number");
        // Finite as a float: below the midpoint between the largest float and the next power of two.
        const double v = n.get<double>();
        if (!(std::abs(v) < 0x1.ffffffp+127)) fail(what, ": ", at, ": expected a finite number");
        return float(v);
    };
    if (j.is_number()) return {number(j, where)};
    if (!j.is_array() || j.empty()) fail(what, ": ", where, ": expected a number or a non-empty array of numbers");
    for (size_t i = 0; i < j.size(); ++i) values.push_back(number(j[i], where + "[" + std::to_string(i) + "]"));
    return values;
}

} // namespace

std::string texture_file_name(const std::string& path, bool true_texture, bool radiance) {
    std::string name = path;
    for (char& c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) c = '_';
    }
    return name + (true_texture ? ".true" : "") + (radiance ? ".hdr" : ".png");
}

std::string gradient_file_name(const std::string& path) {
    std::string name = texture_file_name(path, false, false);
    return name.substr(0, name.size() - 4) + ".grad.png";
}

std::string format_params_json(const std::vector<ParamRecord>& records) {
    Json params = Json::object();
    for (const ParamRecord* r : sorted_checked(records)) {
        Json entry = Json::object();
        if (r->texture) entry["texture"] = texture_file_name(r->path, false, r->radiance);
        else entry["value"] = float_array(r->value, r->path + ".value");
        // How the PNGs hold the values: said for data textures only, so that a file written before they were
        // stored as values (sRGB-encoded, as colours) still reads as it was written.
        if (r->data && (r->texture || r->true_texture)) entry["png_values"] = "stored";
        if (r->true_texture) entry["true_texture"] = texture_file_name(r->path, true, r->radiance);
        if (r->gradient_picture) entry["gradient_picture"] = gradient_file_name(r->path);
        if (r->true_value) entry["true_value"] = float_array(*r->true_value, r->path + ".true_value");
        if (r->error) {
            if (!std::isfinite(*r->error)) fail("params.json: ", r->path, ".error is not finite (", *r->error, ")");
            // At a float's precision, as the values it measures: 0.42511106, not 0.4251110553741455.
            const float e = float(*r->error);
            entry["error"] = std::isfinite(e) ? float_as_short_double(e) : *r->error;
        }
        params[r->path] = std::move(entry);
    }
    Json root = Json::object();
    root["parameters"] = std::move(params);
    return root.dump(2) + "\n";
}

void write_params_json(const std::filesystem::path& params_json, const std::vector<ParamRecord>& records) {
    std::string text = format_params_json(records);  // validates before anything is written
    const std::filesystem::path dir = params_json.parent_path();
    for (const ParamRecord& r : records) {
        const auto write = [&](const std::filesystem::path& path, const Image& image) {
            if (r.radiance) write_hdr(path, image);
            else if (r.data) write_png16(path, image);   // values as stored, 16 bits (read back as they are)
            else write_png(path, image);
        };
        if (r.texture) write(dir / texture_file_name(r.path, false, r.radiance), *r.texture);
        if (r.true_texture) write(dir / texture_file_name(r.path, true, r.radiance), *r.true_texture);
        if (r.gradient_picture) write_png(dir / gradient_file_name(r.path), *r.gradient_picture);
    }
    write_file_atomic(params_json, text);
}

std::vector<ParamRecord> read_params_json(const std::filesystem::path& params_json) {
    const std::string what = params_json.string();
    Json root;
    // A key given twice in one object (the scene loader refuses it too): JSON keeps the last, silently.
    std::vector<std::set<std::string>> keys;
    const Json::parser_callback_t track = [&](int, Json::parse_event_t event, Json& parsed) {
        if (event == Json::parse_event_t::object_start) keys.emplace_back();
        if (event == Json::parse_event_t::object_end) keys.pop_back();
        if (event == Json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
            fail(what, ": the key \"", parsed.get<std::string>(), "\" is given twice in one object");
        return true;
    };
    try {
        root = Json::parse(read_file(params_json), track);
    } catch (const nlohmann::json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 3, column 5: ..." without nlohmann's prefix.
        const std::string message = e.what(), marker = "parse error at ";
        const size_t at = message.find(marker);
        fail(what, ": not valid JSON: ", at == std::string::npos ? message : message.substr(at + marker.size()));
    } catch (const nlohmann::json::out_of_range& e) {
        // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
        const std::string message = e.what(), marker = "] ";
        const size_t at = message.find(marker);
        fail(what, ": not valid JSON: ", at == std::string::npos ? message : message.substr(at + marker.size()));
    }
    // Other top-level keys are left to whoever writes the file (an iteration, a run's settings).
    if (!root.is_object()) fail(what, ": expected a JSON object");
    if (!root.contains("parameters")) fail(what, ": parameters: required key is missing");
    if (!root["parameters"].is_object()) fail(what, ": parameters: expected an object");

    std::vector<ParamRecord> records;
    const Json& params = root["parameters"];
    for (auto it = params.begin(); it != params.end(); ++it) {
        const std::string where = child_path("parameters", it.key());
        const Json& entry = it.value();
        if (!entry.is_object()) fail(what, ": ", where, ": expected an object");
        ParamRecord r;
        r.path = it.key();
        for (auto f = entry.begin(); f != entry.end(); ++f) {
            const std::string& key = f.key();
            const std::string at = child_path(where, key);
            if (key == "value") r.value = read_floats(f.value(), what, at);
            else if (key == "true_value") r.true_value = read_floats(f.value(), what, at);
            else if (key == "error") {
                if (!f.value().is_number()) fail(what, ": ", at, ": expected a number");
                r.error = f.value().get<double>();
            } else if (key == "png_values") {
                if (f.value() != "stored" && f.value() != "srgb")
                    fail(what, ": ", at, ": expected \"stored\" or \"srgb\"");
                r.data = f.value() == "stored";
            } else if (key == "texture" || key == "true_texture" || key == "gradient_picture") {
                if (!f.value().is_string() || f.value().get<std::string>().empty())
                    fail(what, ": ", at, ": expected a file name");
                const std::string name = f.value().get<std::string>();
                (key == "texture" ? r.texture : key == "true_texture" ? r.true_texture : r.gradient_picture) =
                    read_texture(params_json.parent_path(), name, what, at);
            } else {
                fail(what, ": ", at, ": unknown key");
            }
        }
        if (r.texture.has_value() == !r.value.empty())
            fail(what, ": ", where, ": needs either \"value\" or \"texture\"", r.texture ? ", not both" : "");
        records.push_back(std::move(r));
    }
    std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return records;
}

} // namespace adjoint::app
