// Typed, path-tracking reads of a JSON document: every failure is a SceneError naming the JSON path.
#pragma once
#include <adjoint/app/scene.h>

#include <span>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <limits>
#include <string>
#include <string_view>

namespace adjoint::app::detail {

// Ordered, so that "the first problem" and parameter order follow the file.
using Json = nlohmann::ordered_json;

// `parent.key`, or `parent["key"]` when the key is not a plain name (so parameter paths stay readable).
std::string child_path(const std::string& parent, std::string_view key);
std::string index_path(const std::string& parent, size_t index);
// The path as messages show it ("(top level)" for the document itself).
std::string shown_path(const std::string& path);
// A number as messages show it: the shortest text that reads back as x, a float's as a float (a bound of 1718873 is
// not 1.71887e+06, and 0.001f not 0.0010000000474974513).
std::string number_text(double x);
std::string number_text(float x);

// A value inside a document, with its JSON path and the file errors name.
class JsonValue {
public:
    JsonValue(const Json& json, std::string path, const std::string& file)
        : json_(&json), path_(std::move(path)), file_(&file) {}

    const Json& json() const { return *json_; }
    const std::string& path() const { return path_; }
    const std::string& file() const { return *file_; }
    [[noreturn]] void fail(const std::string& what) const;

    // Objects. expect_object checks the keys against `allowed` (keys starting with '_' are comments).
    void expect_object(std::span<const std::string_view> allowed) const;
    void expect_object(std::initializer_list<std::string_view> allowed) const {
        expect_object(std::span<const std::string_view>(allowed.begin(), allowed.size()));
    }
    bool has(std::string_view key) const;
    std::optional<JsonValue> get(std::string_view key) const;
    JsonValue require(std::string_view key) const;
    JsonValue child(const std::string& key) const; // an existing key of an object

    // Arrays.
    size_t array_size() const; // fails unless an array
    JsonValue operator[](size_t index) const;

    float number() const;                              // finite, within float range
    // > lo and <= hi, else "expected <what>".
    float number_above(float lo, const char* what, float hi = std::numeric_limits<float>::infinity()) const;
    float number_at_least(float lo, const char* what) const; // >= lo
    uint64_t integer(uint64_t lo, uint64_t hi, const char* what) const; // an integer in [lo, hi]
    std::string string() const;
    std::string nonempty_string() const;
    float3 vec3() const;       // [x, y, z]
    float3 color() const;      // [r, g, b], each >= 0
    Resolution resolution() const; // [width, height], 1..max_resolution
    // One of the strings in `names`; returns its position.
    size_t choice(std::span<const std::string_view> names) const;
    size_t choice(std::initializer_list<std::string_view> names) const {
        return choice(std::span<const std::string_view>(names.begin(), names.size()));
    }

private:
    const Json* json_;
    std::string path_;
    const std::string* file_;
};

} // namespace adjoint::app::detail

namespace adjoint::app::detail {
// Objects and arrays nest at most this deep in a scene file (deeper is refused before it costs anything).
inline constexpr size_t max_json_depth = 256;
// Parses a document; a syntax error is a SceneError at "line L, column C", a number beyond a double or
// nesting deeper than max_json_depth a SceneError at its JSON path.
Json parse_json(std::string_view text, const std::string& file);
} // namespace adjoint::app::detail
