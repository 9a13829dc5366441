// OBJ and MTL text checked and rewritten line by line before tinyobjloader reads it: tinyobjloader reads a
// missing or non-numeric coordinate as 0 and drops a polygon with an index past the vertices, and a face takes
// time to triangulate that grows faster than its corner count; each of those is refused here, naming the file
// and line. It also reads one word as a usemtl name and one number as a red colour: those lines are rewritten.
#include "scene/loading.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace adjoint::app::detail {

namespace {

// The text's lines (ended by "\n", "\r\n" or "\r", as tinyobjloader splits them), numbered from 1.
template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
    size_t number = 1, start = 0;
    while (start < text.size()) {
        size_t end = text.find_first_of("\r\n", start);
        if (end == std::string_view::npos) end = text.size();
        visit(number++, text.substr(start, end - start));
        start = end + (text.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    }
}

// The line's words (split at spaces and tabs), up to a '#' comment, into `words` (reused across lines).
void split_words(std::string_view line, std::vector<std::string_view>& words) {
    words.clear();
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i == line.size() || line[i] == '#') break;
        size_t end = i;
        while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
        words.push_back(line.substr(i, end - i));
        i = end;
    }
}

// A whole word as a number a float holds (finite, |v| <= FLT_MAX); a leading '+' is allowed.
bool float_number(std::string_view word, double& value) {
    if (!word.empty() && word[0] == '+') word.remove_prefix(1);
    const auto r = std::from_chars(word.data(), word.data() + word.size(), value);
    return !word.empty() && r.ec == std::errc() && r.ptr == word.data() + word.size() && std::isfinite(value) &&
           std::abs(value) <= std::numeric_limits<float>::max();
}

// The rest of the line after its first word (a material's name after usemtl or newmtl), without the spaces,
// tabs and '\r' around it; "" when there is none.
std::string_view rest_of_line(std::string_view line, std::string_view key) {
    constexpr std::string_view blank = " \t\r";
    const size_t start = line.find(key) + key.size();
    const size_t first = line.find_first_not_of(blank, start);
    if (first == std::string_view::npos) return {};
    return line.substr(first, line.find_last_not_of(blank) + 1 - first);
}

// A material name's spaces and tabs as tinyobjloader reads them within one word (control characters no
// writer puts in a name).
constexpr char encoded_space = '\x1f', encoded_tab = '\x1e';

// The text with each line passed through rewrite(key, words, line, out): it appends the line as tinyobjloader
// should read it to `out` (line ends kept, so line numbers stay).
template <typename Rewrite>
std::string rewrite_lines(std::string_view text, Rewrite rewrite) {
    std::string out;
    out.reserve(text.size() + 64);
    std::vector<std::string_view> words;
    for_each_line(text, [&](size_t, std::string_view content) {
        split_words(content, words);
        if (words.empty()) out += content;
        else rewrite(words[0], words, content, out);
        const size_t end = size_t(content.data() - text.data()) + content.size();
        out += text.substr(end, text.compare(end, 2, "\r\n") == 0 ? 2 : end < text.size() ? 1 : 0);
    });
    return out;
}

// "usemtl <name>" or "newmtl <name>" with the name as one word.
bool rewrite_material_name(std::string_view key, std::string_view line, std::string& out) {
    if (key != "usemtl" && key != "newmtl") return false;
    out += key;
    out += ' ';
    for (const char c : rest_of_line(line, key)) out += c == ' ' ? encoded_space : c == '\t' ? encoded_tab : c;
    return true;
}

// The line as messages quote it (shortened: a line can be a megabyte long).
std::string quoted(std::string_view line) {
    constexpr size_t shown = 60;
    return "\"" + std::string(line.substr(0, shown)) + (line.size() > shown ? "...\"" : "\"");
}

// Words 1.. of `words` are numbers a float holds, at least `least` of them and at most `most`.
bool numbers(const std::vector<std::string_view>& words, size_t least, size_t most, double lo = -HUGE_VAL) {
    if (words.size() < least + 1 || words.size() > most + 1) return false;
    for (size_t w = 1; w < words.size(); ++w) {
        double v = 0;
        if (!float_number(words[w], v) || v < lo) return false;
    }
    return true;
}

// The OBJ's position, texture-coordinate and normal counts so far, and the largest positive index a face
// used of each (checked against the whole file's count at its end: OBJ files may refer forward).
struct ObjCounts {
    int64_t count[3] = {0, 0, 0};
    int64_t largest[3] = {0, 0, 0};
    size_t largest_line[3] = {0, 0, 0};
};
constexpr const char* attribute_name[3] = {"position", "texture coordinate", "normal"};

// One corner "v", "v/vt", "v//vn" or "v/vt/vn"; an index that is not a plain integer (or is 0) is left to
// tinyobjloader's own message. Returns the reason an index is out of range, or "".
std::string check_corner(std::string_view corner, size_t line, ObjCounts& counts) {
    for (int a = 0; a < 3 && !corner.empty(); ++a) {
        const size_t slash = corner.find('/');
        const std::string_view word = corner.substr(0, slash);
        corner = slash == std::string_view::npos ? std::string_view() : corner.substr(slash + 1);
        int64_t index = 0;
        const auto r = std::from_chars(word.data(), word.data() + word.size(), index);
        if (word.empty() || r.ec != std::errc() || r.ptr != word.data() + word.size() || index == 0) continue;
        if (index < 0 && -index > counts.count[a])   // relative to the elements read so far
            return "a face refers to " + std::string(attribute_name[a]) + " " + std::string(word) + " of " +
                   std::to_string(counts.count[a]) + " read so far";
        if (index > counts.largest[a]) {
            counts.largest[a] = index;
            counts.largest_line[a] = line;
        }
    }
    return "";
}

} // namespace

std::vector<uint32_t> check_obj_text(std::string_view text, const std::string& shown, const JsonValue& where) {
    // UTF-16 (a byte-order mark, or zero bytes between ASCII ones) reads as lines of nothing: "has no faces".
    const std::string_view head = text.substr(0, 4096);
    if (head.rfind("\xFF\xFE", 0) == 0 || head.rfind("\xFE\xFF", 0) == 0 || head.find('\0') != std::string_view::npos)
        where.fail(shown + " is UTF-16 or binary, not text: OBJ is read as ASCII or UTF-8");
    ObjCounts counts;
    std::vector<uint32_t> face_corners;
    std::vector<std::string_view> words;
    const auto fail_at = [&](size_t line, const std::string& what) {
        where.fail(shown + " line " + std::to_string(line) + ": " + what);
    };
    for_each_line(text, [&](size_t line, std::string_view content) {
        split_words(content, words);
        if (words.empty()) return;
        const std::string_view key = words[0];
        if (key == "v") {
            // x y z, optionally w or r g b (tinyobjloader reads either).
            if (!numbers(words, 3, 7)) fail_at(line, "a position needs x, y and z as finite numbers (got " + quoted(content) + ")");
            ++counts.count[0];
        } else if (key == "vt") {
            if (!numbers(words, 1, 3)) fail_at(line, "a texture coordinate needs u [v [w]] as finite numbers (got " + quoted(content) + ")");
            ++counts.count[1];
        } else if (key == "vn") {
            if (!numbers(words, 3, 3)) fail_at(line, "a normal needs x, y and z as finite numbers (got " + quoted(content) + ")");
            ++counts.count[2];
        } else if (key == "f") {
            if (words.size() - 1 > max_face_corners)
                fail_at(line, "a face has " + std::to_string(words.size() - 1) + " corners; at most " +
                                  std::to_string(max_face_corners) + " are read");
            for (size_t w = 1; w < words.size(); ++w) {
                const std::string reason = check_corner(words[w], line, counts);
                if (!reason.empty()) fail_at(line, reason);
            }
            // tinyobjloader drops a face of fewer corners.
            if (words.size() - 1 >= 3) face_corners.push_back(static_cast<uint32_t>(words.size() - 1));
        }
    });
    for (int a = 0; a < 3; ++a)
        if (counts.largest[a] > counts.count[a])
            fail_at(counts.largest_line[a], "a face refers to " + std::string(attribute_name[a]) + " " +
                                                std::to_string(counts.largest[a]) + " of " +
                                                std::to_string(counts.count[a]));
    return face_corners;
}

std::string check_mtl_text(std::string_view text, const std::string& shown) {
    std::string problem;
    std::set<std::string, std::less<>> names;
    std::vector<std::string_view> words;
    for_each_line(text, [&](size_t line, std::string_view content) {
        if (!problem.empty()) return;
        split_words(content, words);
        if (words.empty()) return;
        const std::string_view key = words[0];
        const std::string at = shown + " line " + std::to_string(line) + ": ";
        if (key == "newmtl" && words.size() > 1) {
            // tinyobjloader keeps both materials of one name, and faces find only one of them. The name is the
            // rest of the line, '#' included (mtl_text_for_tinyobj).
            const std::string_view name = rest_of_line(content, key);
            if (!names.emplace(name).second) problem = at + "a second material named " + std::string(name) + " (newmtl)";
        } else if (key == "Kd" || key == "Ks" || key == "Ka" || key == "Ke") {
            if (!numbers(words, 1, 1, 0.0) && !numbers(words, 3, 3, 0.0))
                problem = at + std::string(key) + " needs r, g and b, or one grey value, as finite numbers >= 0 (got " +
                          quoted(content) + ")";
        } else if (key == "Ns") {
            if (!numbers(words, 1, 1, 0.0))
                problem = at + "Ns needs one finite number >= 0 (got " + quoted(content) + ")";
        }
    });
    return problem;
}

std::string obj_text_for_tinyobj(std::string_view text) {
    return rewrite_lines(text, [](std::string_view key, const auto&, std::string_view line, std::string& out) {
        if (rewrite_material_name(key, line, out)) return;
        if (key == "mtllib") {
            // tinyobjloader reads "\ " as a space within a name and drops other backslashes: those are a Windows
            // writer's separators ("mtllib .\scene.mtl").
            for (size_t i = 0; i < line.size(); ++i)
                out += line[i] == '\\' && (i + 1 == line.size() || line[i + 1] != ' ') ? '/' : line[i];
            return;
        }
        out += line;
    });
}

std::string mtl_text_for_tinyobj(std::string_view text) {
    return rewrite_lines(text, [](std::string_view key, const auto& words, std::string_view line, std::string& out) {
        if (rewrite_material_name(key, line, out)) return;
        if ((key == "Kd" || key == "Ks" || key == "Ka" || key == "Ke") && words.size() == 2) {
            // "Kd 0.5": grey (check_mtl_text has checked the number).
            out += std::string(key) + " " + std::string(words[1]) + " " + std::string(words[1]) + " " + std::string(words[1]);
            return;
        }
        out += line;
    });
}

std::string unknown_usemtl(std::string_view text, const std::vector<std::string>& names, const std::string& shown) {
    std::string problem;
    std::vector<std::string_view> words;
    for_each_line(text, [&](size_t line, std::string_view content) {
        split_words(content, words);
        if (!problem.empty() || words.empty() || words[0] != "usemtl") return;
        const std::string name(rest_of_line(content, words[0]));
        if (std::find(names.begin(), names.end(), name) != names.end()) return;
        std::string known;
        for (size_t i = 0; i < names.size() && i < 8; ++i) known += (i ? ", " : "") + names[i];
        if (names.size() > 8) known += ", ...";
        problem = shown + " line " + std::to_string(line) + ": usemtl " + name + " names no material of its MTL files (" +
                  (names.empty() ? "none" : known) + ")";
    });
    return problem.empty() ? shown + " has faces before any usemtl: they have no material of its MTL file" : problem;
}

std::string material_name_from_tinyobj(std::string name) {
    for (char& c : name) c = c == encoded_space ? ' ' : c == encoded_tab ? '\t' : c;
    return name;
}

std::string windows_path(const std::filesystem::path& folder, const std::string& name) {
    if (name.find('\\') == std::string::npos) return name;
    std::error_code ec;
    if (std::filesystem::exists(folder / name, ec)) return name;
    std::string slashed = name;
    std::replace(slashed.begin(), slashed.end(), '\\', '/');
    return slashed;
}

} // namespace adjoint::app::detail
