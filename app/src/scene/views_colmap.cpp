// The COLMAP view source: `{"colmap": "sparse/0", "images": "images"}`, a sparse model's pinhole cameras and
// image poses, from its text (cameras.txt, images.txt) or binary (cameras.bin, images.bin) files.
#include "scene/loading.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>

namespace adjoint::app::detail {

namespace {

struct ColmapCamera {
    std::string model;
    uint64_t width = 0, height = 0;
    std::vector<double> params;
};
struct ColmapImage {
    double q[4] = {1, 0, 0, 0}; // world-to-camera rotation (w, x, y, z)
    double t[3] = {0, 0, 0};    // world-to-camera translation
    uint32_t id = 0, camera = 0;
    std::string name;
    std::string where;          // "images.txt line 7", for messages
};
struct Model {
    std::map<uint32_t, ColmapCamera> cameras;
    std::vector<ColmapImage> images;
};

// A problem in the model's files; read_colmap turns it into a SceneError at the scene's `views.colmap`.
struct ModelError {
    std::string what;
};
[[noreturn]] void bad(const std::string& where, const std::string& what) { throw ModelError{where + ": " + what}; }

// COLMAP's camera models by id (src/colmap/sensor/models.h) with their parameter counts: only the first two
// are pinholes; the others have lens distortion, which would need the images undistorted (reductions, below:
// unless its coefficients are all 0).
struct ModelInfo {
    const char* name;
    size_t params;
};
constexpr ModelInfo models[] = {{"SIMPLE_PINHOLE", 3}, {"PINHOLE", 4},         {"SIMPLE_RADIAL", 4},
                                {"RADIAL", 5},         {"OPENCV", 8},          {"OPENCV_FISHEYE", 8},
                                {"FULL_OPENCV", 12},   {"FOV", 5},             {"SIMPLE_RADIAL_FISHEYE", 4},
                                {"RADIAL_FISHEYE", 5}, {"THIN_PRISM_FISHEYE", 12}};

// Distortion models that are pinholes when their coefficients are all 0 (a NeRF transforms.json's OPENCV with zero
// k and p was taken, COLMAP's was refused as "has lens distortion"): the pinhole and the parameters it keeps.
struct Reduction {
    const char* model;
    const char* pinhole;
    size_t kept;
};
constexpr Reduction reductions[] = {{"SIMPLE_RADIAL", "SIMPLE_PINHOLE", 3}, {"RADIAL", "SIMPLE_PINHOLE", 3},
                                    {"OPENCV", "PINHOLE", 4}, {"FULL_OPENCV", "PINHOLE", 4}};

const Reduction* reduction_of(const std::string& model) {
    for (const Reduction& r : reductions)
        if (model == r.model) return &r;
    return nullptr;
}

// Checks a camera and makes a distortion model without distortion its pinhole.
void take_pinhole(ColmapCamera& c, const std::string& where) {
    if (const Reduction* r = reduction_of(c.model)) {
        size_t n = 0;
        for (const ModelInfo& m : models)
            if (c.model == m.name) n = m.params;
        if (c.params.size() != n) bad(where, c.model + " takes " + std::to_string(n) + " parameters");
        std::string coefficients;
        for (size_t i = r->kept; i < n; ++i)
            if (c.params[i] != 0) {
                char text[64];
                std::snprintf(text, sizeof text, "%s%.6g", coefficients.empty() ? "" : " ", c.params[i]);
                coefficients += text;
            }
        if (!coefficients.empty())
            bad(where, "camera model " + c.model + " has lens distortion (its coefficients " + coefficients +
                           "), which Adjoint does not undo (SIMPLE_PINHOLE and PINHOLE, or a distortion model whose "
                           "coefficients are all 0: undistort the images first, e.g. with colmap image_undistorter)");
        c.model = r->pinhole;
        c.params.resize(r->kept);
    }
    if (c.model == "SIMPLE_PINHOLE" || c.model == "PINHOLE") {
        const size_t n = c.model == "PINHOLE" ? 4 : 3;
        if (c.params.size() != n) bad(where, c.model + " takes " + std::to_string(n) + " parameters");
        for (double p : c.params)   // the views keep them as floats: 1e300 would be infinite there
            if (!(std::abs(p) <= std::numeric_limits<float>::max()))
                bad(where, "a parameter is not a finite 32-bit float");
        if (!(c.params[0] > 0) || (n == 4 && !(c.params[1] > 0))) bad(where, "focal lengths must be > 0");
        if (c.width == 0 || c.height == 0 || c.width > (1u << 20) || c.height > (1u << 20))
            bad(where, "expected a width and height in 1..1048576");
        // The test every camera takes, at the camera's own size (the views scale focal lengths and size alike).
        const std::string why = focal_problem(c.params[0], c.params[n == 4 ? 1 : 0], c.width, c.height);
        if (!why.empty()) bad(where, why);
        return;
    }
    bool known = false;
    for (const ModelInfo& m : models) known = known || c.model == m.name;
    if (!known)
        bad(where, "unknown camera model " + c.model + " (expected SIMPLE_PINHOLE or PINHOLE, or one of COLMAP's other "
                   "models, which have lens distortion)");
    bad(where, "camera model " + c.model + " has lens distortion, which Adjoint does not undo (SIMPLE_PINHOLE and "
               "PINHOLE, or SIMPLE_RADIAL, RADIAL, OPENCV and FULL_OPENCV with coefficients of 0: undistort the "
               "images first, e.g. with colmap image_undistorter)");
}

// ---- text ------------------------------------------------------------------------------------------------
template <typename T>
bool parse(const std::string& token, T& out) {
    const char* end = token.data() + token.size();
    auto [ptr, ec] = std::from_chars(token.data(), end, out);
    return ec == std::errc() && ptr == end;
}

// A line's words, split at spaces and tabs; starts[i] is where word i begins.
std::vector<std::string> tokens_of(const std::string& line, std::vector<size_t>* starts = nullptr) {
    std::vector<std::string> tokens;
    for (size_t i = 0; i < line.size();) {
        if (std::isspace(static_cast<unsigned char>(line[i]))) {
            ++i;
            continue;
        }
        size_t end = i;
        while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
        tokens.push_back(line.substr(i, end - i));
        if (starts) starts->push_back(i);
        i = end;
    }
    return tokens;
}

void read_cameras_text(const std::string& text, const std::string& shown, Model& model) {
    std::istringstream in(text);
    size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        const std::vector<std::string> t = tokens_of(line);
        if (t.empty() || t[0][0] == '#') continue;
        const std::string where = shown + " line " + std::to_string(number);
        ColmapCamera c;
        uint32_t id = 0;
        if (t.size() < 4 || !parse(t[0], id) || !parse(t[2], c.width) || !parse(t[3], c.height))
            bad(where, "expected CAMERA_ID MODEL WIDTH HEIGHT PARAMS[]");
        c.model = t[1];
        for (size_t i = 4; i < t.size(); ++i) {
            double p = 0;
            if (!parse(t[i], p)) bad(where, "expected a number, got \"" + t[i] + "\"");
            c.params.push_back(p);
        }
        take_pinhole(c, where);
        if (!model.cameras.emplace(id, std::move(c)).second) bad(where, "camera " + std::to_string(id) + " given twice");
    }
}

// Two lines per image: its pose and name, then its 2D points (possibly empty), which are taken whatever they
// hold, as COLMAP reads them.
void read_images_text(const std::string& text, const std::string& shown, Model& model) {
    std::istringstream in(text);
    size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        std::vector<size_t> starts;
        const std::vector<std::string> t = tokens_of(line, &starts);
        if (t.empty() || t[0][0] == '#') continue;
        ColmapImage image;
        image.where = shown + " line " + std::to_string(number);
        bool ok = t.size() >= 10 && parse(t[0], image.id) && parse(t[8], image.camera);
        for (size_t i = 0; ok && i < 4; ++i) ok = parse(t[1 + i], image.q[i]);
        for (size_t i = 0; ok && i < 3; ++i) ok = parse(t[5 + i], image.t[i]);
        if (!ok) bad(image.where, "expected IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME");
        // The name is the rest of the line: it may hold spaces.
        image.name = line.substr(starts[9]);
        while (!image.name.empty() && std::isspace(static_cast<unsigned char>(image.name.back()))) image.name.pop_back();
        model.images.push_back(std::move(image));
        // POINTS2D[] as (X, Y, POINT3D_ID): not needed, but it must be that line: a file that leaves it out
        // (its images on consecutive lines) would otherwise lose every second image without a word.
        if (!std::getline(in, line)) break;
        ++number;
        const std::vector<std::string> points = tokens_of(line);
        bool ok_points = points.size() % 3 == 0;
        for (size_t i = 0; ok_points && i < points.size(); ++i) {
            double v = 0;
            ok_points = parse(points[i], v);
        }
        if (!ok_points)
            bad(shown + " line " + std::to_string(number),
                "expected the 2D points of the image on line " + std::to_string(number - 1) +
                    " (X Y POINT3D_ID triplets, or an empty line): each image takes two lines");
    }
}

// ---- binary (little-endian, as COLMAP writes it) ----------------------------------------------------------
class Reader {
public:
    Reader(const std::string& bytes, const std::string& shown) : bytes_(bytes), shown_(shown) {}
    template <typename T>
    T next(const std::string& what) {
        T v;
        need(sizeof(T), what);
        std::memcpy(&v, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return v;
    }
    void skip(uint64_t count, uint64_t size, const std::string& what) {
        if (count > (bytes_.size() - at_) / size) fail(what + ": the file ends early");
        at_ += count * size;
    }
    std::string name(const std::string& what) {
        const size_t end = bytes_.find('\0', at_);
        if (end == std::string::npos) fail(what + ": the file ends early");
        std::string s = bytes_.substr(at_, end - at_);
        at_ = end + 1;
        return s;
    }
    [[noreturn]] void fail(const std::string& what) const { bad(shown_, what); }

private:
    void need(size_t n, const std::string& what) const {
        if (bytes_.size() - at_ < n) fail(what + ": the file ends early");
    }
    const std::string& bytes_;
    const std::string& shown_;
    size_t at_ = 0;
};

void read_cameras_binary(const std::string& bytes, const std::string& shown, Model& model) {
    Reader in(bytes, shown);
    const auto count = in.next<uint64_t>("the camera count");
    for (uint64_t i = 0; i < count; ++i) {
        // Named by its place in the file until its id is read, by its id after (as cameras.txt's are).
        std::string what = "camera record " + std::to_string(i + 1) + " of " + std::to_string(count);
        const auto id = in.next<uint32_t>(what);   // COLMAP's camera_t
        what = "camera " + std::to_string(id);
        const auto model_id = in.next<int32_t>(what);
        ColmapCamera c;
        c.width = in.next<uint64_t>(what);
        c.height = in.next<uint64_t>(what);
        if (model_id < 0 || size_t(model_id) >= std::size(models))
            in.fail(what + ": unknown camera model id " + std::to_string(model_id));
        c.model = models[model_id].name;
        const std::string where = shown + ": " + what;
        // A model with distortion, refused before its parameters are read; those that may have none are read.
        if (model_id > 1 && !reduction_of(c.model)) take_pinhole(c, where);
        for (size_t p = 0; p < models[model_id].params; ++p) c.params.push_back(in.next<double>(what));
        take_pinhole(c, where);
        if (!model.cameras.emplace(id, std::move(c)).second) in.fail(what + " is given twice");
    }
}

void read_images_binary(const std::string& bytes, const std::string& shown, Model& model) {
    Reader in(bytes, shown);
    const auto count = in.next<uint64_t>("the image count");
    for (uint64_t i = 0; i < count; ++i) {
        std::string what = "image record " + std::to_string(i + 1) + " of " + std::to_string(count);
        ColmapImage image;
        image.id = in.next<uint32_t>(what);   // COLMAP's image_t
        what = "image " + std::to_string(image.id);
        for (double& q : image.q) q = in.next<double>(what);
        for (double& t : image.t) t = in.next<double>(what);
        image.camera = in.next<uint32_t>(what);
        image.name = in.name(what);
        what = "image " + std::to_string(image.id) + " (" + image.name + ")";
        image.where = shown + ": " + what;
        const auto points = in.next<uint64_t>(what);
        in.skip(points, 24, what);   // x, y (doubles) and a point id (int64) per 2D point
        model.images.push_back(std::move(image));
    }
}

// ---- the views --------------------------------------------------------------------------------------------
// World-to-camera in OpenCV's convention (x right, y down, looking down +z) to a look-at: the camera's centre
// is −Rᵀt, it looks along R's third row and its up is minus R's second row.
Camera view_of(const ColmapImage& image, const ColmapCamera& c, const Camera& camera) {
    double n = 0;
    for (double q : image.q) n += q * q;
    n = std::sqrt(n);
    if (!(n > 1e-12) || !std::isfinite(n)) bad(image.where, "the rotation quaternion is zero or not finite");
    for (double t : image.t)
        if (!std::isfinite(t)) bad(image.where, "the translation is not finite");
    const double w = image.q[0] / n, x = image.q[1] / n, y = image.q[2] / n, z = image.q[3] / n;
    const double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                            {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                            {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    double centre[3];
    for (size_t i = 0; i < 3; ++i) centre[i] = -(R[0][i] * image.t[0] + R[1][i] * image.t[1] + R[2][i] * image.t[2]);
    Camera view = camera;
    view.eye = {float(centre[0]), float(centre[1]), float(centre[2])};
    view.target = {float(centre[0] + R[2][0]), float(centre[1] + R[2][1]), float(centre[2] + R[2][2])};
    view.up = {float(-R[1][0]), float(-R[1][1]), float(-R[1][2])};
    // COLMAP's pixel centres are at +0.5 too: the intrinsics only scale to the views' resolution.
    const double sx = double(camera.width) / double(c.width), sy = double(camera.height) / double(c.height);
    const bool simple = c.model == "SIMPLE_PINHOLE";
    const double fx = c.params[0], fy = simple ? c.params[0] : c.params[1];
    const double cx = c.params[simple ? 1 : 2], cy = c.params[simple ? 2 : 3];
    view.intrinsics = Intrinsics{float(fx * sx), float(fy * sy), float(cx * sx), float(cy * sy)};
    view.fov_y = fov_y_of(view.intrinsics->fy, camera.height);
    return view;
}

Model read_model(const std::filesystem::path& dir, const std::string& shown) {
    Model model;
    std::string reason;
    std::error_code ec;
    const bool text = std::filesystem::exists(dir / "cameras.txt", ec);
    const bool binary = !text && std::filesystem::exists(dir / "cameras.bin", ec);
    if (!text && !binary) bad(shown, "has neither cameras.txt nor cameras.bin (a COLMAP sparse model's folder)");
    const char* ext = text ? ".txt" : ".bin";
    for (const char* file : {"cameras", "images"}) {
        const std::string name = std::string(file) + ext;
        const std::string display = (std::filesystem::path(shown) / name).generic_string();
        const std::optional<std::string> bytes = try_read_file(dir / name, display, reason);
        if (!bytes) bad(shown, reason);
        if (text) (file[0] == 'c' ? read_cameras_text : read_images_text)(*bytes, display, model);
        else (file[0] == 'c' ? read_cameras_binary : read_images_binary)(*bytes, display, model);
    }
    return model;
}

void read_colmap(const JsonValue& value, const std::filesystem::path& base_dir, const Camera& camera,
                 std::vector<Camera>& views, std::vector<ViewImage>& images) {
    const JsonValue where = value.require("colmap");
    const std::string shown = where.nonempty_string();
    const std::string folder = value.require("images").nonempty_string();
    Model model;
    try {
        model = read_model(base_dir / shown, shown);
        // An id or a name given twice is a broken model: two poses for one photo, or one pose's id twice.
        std::map<uint32_t, const ColmapImage*> ids;
        for (const ColmapImage& image : model.images)
            if (const auto [at, fresh] = ids.emplace(image.id, &image); !fresh)
                bad(image.where, "image id " + std::to_string(image.id) + " is also " + at->second->where + "'s");
        std::stable_sort(model.images.begin(), model.images.end(),
                         [](const ColmapImage& a, const ColmapImage& b) { return a.name < b.name; });
        for (size_t i = 1; i < model.images.size(); ++i)
            if (model.images[i].name == model.images[i - 1].name)
                bad(model.images[i].where,
                    "image " + model.images[i].name + " is also " + model.images[i - 1].where + "'s");
        for (const ColmapImage& image : model.images) {
            const auto c = model.cameras.find(image.camera);
            if (c == model.cameras.end()) bad(image.where, "no camera " + std::to_string(image.camera));
            views.push_back(view_of(image, c->second, camera));
            images.push_back({(std::filesystem::path(folder) / image.name).lexically_normal().generic_string(),
                              {uint32_t(c->second.width), uint32_t(c->second.height)}, image.where});
        }
    } catch (const ModelError& e) {
        where.fail(e.what);   // "<scene>: views.colmap: sparse/0/images.txt line 7: <what>"
    }
}

constexpr std::string_view colmap_keys[] = {"images"};

} // namespace

const ViewSource colmap_view_source{"colmap", colmap_keys, read_colmap};

} // namespace adjoint::app::detail
