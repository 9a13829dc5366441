// Typed, path-tracking reads of a JSON document (see json_value.h).
#include "scene/json_value.h"
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <vector>
#include <sstream>

namespace adjoint::app::detail {

namespace {
bool is_plain_name(std::string_view key) {
    if (key.empty()) return false;
    for (char c : key)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}
} // namespace

std::string child_path(const std::string& parent, std::string_view key) {
    if (is_plain_name(key)) return parent.empty() ? std::string(key) : parent + "." + std::string(key);
    return parent + "[" + Json(std::string(key)).dump() + "]";
}

std::string index_path(const std::string& parent, size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

std::string shown_path(const std::string& path) { return path.empty() ? "(top level)" : path; }

std::string number_text(double x) {
    char out[32];
    return std::string(out, std::to_chars(out, out + sizeof out, x).ptr);
}
std::string number_text(float x) {
    char out[32];
    return std::string(out, std::to_chars(out, out + sizeof out, x).ptr);
}

void JsonValue::fail(const std::string& what) const { throw SceneError(*file_, shown_path(path_), what); }

void JsonValue::expect_object(std::span<const std::string_view> allowed) const {
    if (!json_->is_object()) fail("expected an object");
    for (const auto& [key, value] : json_->items()) {
        if (!key.empty() && key[0] == '_') continue;
        bool known = false;
        for (std::string_view a : allowed) known = known || a == key;
        if (known) continue;
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        throw SceneError(*file_, child_path(path_, key), "unknown key (expected one of: " + list + ")");
    }
}

bool JsonValue::has(std::string_view key) const { return json_->is_object() && json_->contains(key); }

std::optional<JsonValue> JsonValue::get(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return child(std::string(key));
}

JsonValue JsonValue::require(std::string_view key) const {
    if (!json_->is_object()) fail("expected an object");
    if (!json_->contains(key)) throw SceneError(*file_, child_path(path_, key), "required key is missing");
    return child(std::string(key));
}

JsonValue JsonValue::child(const std::string& key) const {
    return JsonValue(json_->at(key), child_path(path_, key), *file_);
}

size_t JsonValue::array_size() const {
    if (!json_->is_array()) fail("expected an array");
    return json_->size();
}

JsonValue JsonValue::operator[](size_t index) const {
    return JsonValue(json_->at(index), index_path(path_, index), *file_);
}

float JsonValue::number() const {
    if (!json_->is_number()) fail("expected a number");
    const double v = json_->get<double>();
    if (!std::isfinite(v) || std::abs(v) > std::numeric_limits<float>::max()) fail("expected a finite number");
    return static_cast<float>(v);
}

float JsonValue::number_above(float lo, const char* what, float hi) const {
    if (!json_->is_number()) fail(std::string("expected ") + what);
    const float v = number();
    if (!(v > lo && v <= hi)) fail(std::string("expected ") + what);
    return v;
}

float JsonValue::number_at_least(float lo, const char* what) const {
    if (!json_->is_number()) fail(std::string("expected ") + what);
    const float v = number();
    if (!(v >= lo)) fail(std::string("expected ") + what);
    return v;
}

namespace {
// A whole number >= 0 as written: an integer, or a float with no fraction up to 2^53 (`300.0`, as Python's json
// writes a count computed with `/`), which is exactly that integer.
std::optional<uint64_t> whole_number(const Json& e) {
    if (e.is_number_unsigned()) return e.get<uint64_t>();
    if (e.is_number_integer()) return e.get<int64_t>() >= 0 ? std::optional<uint64_t>(e.get<int64_t>()) : std::nullopt;
    if (e.is_number_float()) {
        const double d = e.get<double>();
        if (d >= 0 && d <= 0x1p53 && std::floor(d) == d) return static_cast<uint64_t>(d);
    }
    return std::nullopt;
}
} // namespace

uint64_t JsonValue::integer(uint64_t lo, uint64_t hi, const char* what) const {
    if (const std::optional<uint64_t> v = whole_number(*json_); v && *v >= lo && *v <= hi) return *v;
    fail(std::string("expected ") + what);
}

std::string JsonValue::string() const {
    if (!json_->is_string()) fail("expected a string");
    return json_->get<std::string>();
}

std::string JsonValue::nonempty_string() const {
    if (!json_->is_string() || json_->get<std::string>().empty()) fail("expected a non-empty string");
    return json_->get<std::string>();
}

float3 JsonValue::vec3() const {
    if (!json_->is_array() || json_->size() != 3) fail("expected [x, y, z] of numbers");
    float3 v;
    for (size_t i = 0; i < 3; ++i) {
        const Json& e = (*json_)[i];
        if (!e.is_number()) fail("expected [x, y, z] of numbers");
        v[i] = (*this)[i].number();
    }
    return v;
}

float3 JsonValue::color() const {
    if (!json_->is_array() || json_->size() != 3) fail("expected [r, g, b] of numbers >= 0");
    float3 v;
    for (size_t i = 0; i < 3; ++i) {
        const Json& e = (*json_)[i];
        if (!e.is_number() || !(e.get<double>() >= 0)) fail("expected [r, g, b] of numbers >= 0");
        v[i] = (*this)[i].number();
    }
    return v;
}

Resolution JsonValue::resolution() const {
    const char* shape = "expected [width, height] of positive integers";
    if (!json_->is_array() || json_->size() != 2) fail(shape);
    uint64_t side[2];
    for (size_t i = 0; i < 2; ++i) {
        const Json& e = (*json_)[i];
        const std::optional<uint64_t> v = whole_number(e);
        if (!v || *v == 0) fail(shape);
        side[i] = *v;
    }
    if (side[0] > max_resolution || side[1] > max_resolution) {
        std::ostringstream os;
        os << side[0] << "x" << side[1] << " is larger than " << max_resolution << " per side";
        fail(os.str());
    }
    return {static_cast<uint32_t>(side[0]), static_cast<uint32_t>(side[1])};
}

size_t JsonValue::choice(std::span<const std::string_view> names) const {
    std::string list;
    for (std::string_view n : names) list += (list.empty() ? "\"" : ", \"") + std::string(n) + "\"";
    if (json_->is_string()) {
        const std::string s = json_->get<std::string>();
        size_t i = 0;
        for (std::string_view n : names) {
            if (n == s) return i;
            ++i;
        }
    }
    fail("expected one of " + list);
}

} // namespace adjoint::app::detail

namespace adjoint::app::detail {
Json parse_json(std::string_view text, const std::string& file) {
    // nlohmann keeps the last of two equal keys; a repeated key is as likely a mistake as a typo, so the
    // parser callback tracks each object's keys (and the JSON path, to name the repeat).
    struct Frame {
        bool array;
        std::string path;
        std::set<std::string> keys;
        std::string key;
        size_t index = 0;
    };
    std::vector<Frame> stack;
    const auto child = [&]() -> std::string {
        if (stack.empty()) return "";
        const Frame& f = stack.back();
        return f.array ? index_path(f.path, f.index) : child_path(f.path, f.key);
    };
    const auto child_done = [&] {
        if (!stack.empty() && stack.back().array) ++stack.back().index;
    };
    // Each frame holds its full path, so the depth is capped before the paths could cost quadratic memory.
    const auto open = [&](bool array) {
        if (stack.size() >= max_json_depth)
            throw SceneError(file, shown_path(child()),
                             "nested deeper than " + std::to_string(max_json_depth) + " levels of objects and arrays");
        stack.push_back({array, child(), {}, {}, 0});
    };
    const Json::parser_callback_t track = [&](int, Json::parse_event_t event, Json& parsed) {
        switch (event) {
        case Json::parse_event_t::object_start: open(false); break;
        case Json::parse_event_t::array_start: open(true); break;
        case Json::parse_event_t::key: {
            Frame& f = stack.back();
            f.key = parsed.get<std::string>();
            if (!f.keys.insert(f.key).second && !(f.key.size() > 0 && f.key[0] == '_'))
                throw SceneError(file, child_path(f.path, f.key), "duplicate key");
            break;
        }
        case Json::parse_event_t::object_end:
        case Json::parse_event_t::array_end:
            stack.pop_back();
            child_done();
            break;
        case Json::parse_event_t::value: child_done(); break;
        }
        return true;
    };
    try {
        return Json::parse(text.begin(), text.end(), track);
    } catch (const Json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error while ..."
        std::string message = e.what();
        const std::string marker = "parse error at ";
        const size_t at = message.find(marker);
        if (at != std::string::npos) message = message.substr(at + marker.size());
        const size_t colon = message.find(": ");
        if (message.rfind("line ", 0) == 0 && colon != std::string::npos)
            throw SceneError(file, message.substr(0, colon), message.substr(colon + 2));
        throw SceneError(file, "", "invalid JSON: " + message);
    } catch (const Json::out_of_range& e) {
        // "[json.exception.out_of_range.406] number overflow parsing '1e400'": the value being parsed is the
        // current frame's child, so its path is known.
        std::string message = e.what();
        const size_t open_quote = message.find('\''), close_quote = message.rfind('\'');
        const std::string number =
            open_quote < close_quote ? message.substr(open_quote + 1, close_quote - open_quote - 1) : "";
        throw SceneError(file, shown_path(child()),
                         number.empty() ? "a number is out of range"
                                        : "the number " + number + " is beyond the range of a double");
    }
}
} // namespace adjoint::app::detail
