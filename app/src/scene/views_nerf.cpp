// The NeRF / instant-ngp view source: `{"nerf": "transforms.json"}`, posed images from a transforms file.
#include "scene/loading.h"

#include <cmath>
#include <optional>

namespace adjoint::app::detail {

namespace {

// A number of the dataset (its own key; the dataset is not a scene file, so other keys are ignored).
std::optional<double> optional_number(const JsonValue& object, std::string_view key) {
    const auto v = object.get(key);
    if (!v) return std::nullopt;
    return static_cast<double>(v->number());
}

// The lens keys of the file's top level, which a frame may override (instant-ngp writes them per frame
// when the cameras differ).
struct Lens {
    std::optional<double> angle_x, angle_y, fl_x, fl_y, cx, cy, w, h;
    std::string model;   // camera_model, "" where none is given
    // The level (the file's top or a frame) whose keys give each axis's focal length: what its problems name.
    std::optional<JsonValue> x_at, y_at;

    void read(const JsonValue& object) {
        const auto take = [&](std::optional<double>& to, std::string_view key) {
            if (auto v = optional_number(object, key)) to = v;
        };
        // A level that gives an axis's focal length (fl or camera_angle) replaces the level above's for that axis:
        // a frame's camera_angle_x is not overridden by the file's fl_x.
        if (object.has("camera_angle_x") || object.has("fl_x")) {
            angle_x = fl_x = std::nullopt;
            x_at = object;
        }
        if (object.has("camera_angle_y") || object.has("fl_y")) {
            angle_y = fl_y = std::nullopt;
            y_at = object;
        }
        take(angle_x, "camera_angle_x");
        take(angle_y, "camera_angle_y");
        take(fl_x, "fl_x");
        take(fl_y, "fl_y");
        take(cx, "cx");
        take(cy, "cy");
        take(w, "w");
        take(h, "h");
        // A fraction of a pixel would scale the focal lengths by w while the images are checked at floor(w). Named
        // at the level that gives it (a file's w of 0 was named at frames[0]).
        for (const auto& [key, v] : {std::pair{"w", w}, std::pair{"h", h}}) {
            if (object.has(key) && v && *v != std::floor(*v))
                object.require(key).fail("expected a whole number of pixels");
            if (object.has(key) && v && !(*v >= 1 && *v <= 1e6))
                object.require(key).fail("expected a number of pixels in [1, 1e6]");
        }
        for (const char* key : {"k1", "k2", "k3", "k4", "p1", "p2"})
            if (auto k = optional_number(object, key); k && *k != 0)
                object.require(key).fail("lens distortion is not supported (pinhole cameras only): undistort the "
                                         "images first");
        if (auto model = object.get("camera_model")) {
            const std::string name = model->string();
            // OPENCV's distortion, if any, is refused above; the pinhole models as COLMAP names them.
            if (name != "OPENCV" && name != "PINHOLE" && name != "SIMPLE_PINHOLE")
                model->fail("\"" + name + "\" is not one of \"PINHOLE\", \"SIMPLE_PINHOLE\", \"OPENCV\" (pinhole "
                            "cameras only, named as COLMAP names them)");
            this->model = name;
        }
    }

    // At the views' resolution: a focal length in pixels is scaled from w × h; a field of view is not. Per axis,
    // fl_x before camera_angle_x, and fl_y before camera_angle_y before the x axis's focal length (square pixels).
    Intrinsics at(const JsonValue& frame, uint32_t width, uint32_t height) const {
        const JsonValue& where = x_at ? *x_at : frame;
        const JsonValue& y_where = y_at ? *y_at : where;
        const double W = width, H = height;
        if (w.has_value() != h.has_value()) frame.fail("give the image size as w and h together");
        const bool sized = w && h;
        if ((fl_x || fl_y || cx || cy) && !sized) frame.fail("fl_x, fl_y, cx and cy need the image size w and h");
        if (!fl_x && !angle_x) where.fail("expected camera_angle_x, or fl_x with w and h");
        // SIMPLE_PINHOLE has one focal length: an fl_y of its own would be taken for a second one.
        if (model == "SIMPLE_PINHOLE" && fl_x && fl_y && *fl_y != *fl_x)
            y_where.require("fl_y").fail("camera_model SIMPLE_PINHOLE has one focal length, but fl_x is " +
                                         number_text(*fl_x) + " and fl_y " + number_text(*fl_y) +
                                         ": give PINHOLE for two");
        // Square pixels in the dataset's images (w x h when given, else the views'), then scaled as a focal length
        // in pixels is: views of another aspect stretch the picture as the resampled photo is.
        const double Wd = sized ? *w : W, Hd = sized ? *h : H, sx = sized ? W / *w : 1, sy = sized ? H / *h : 1;
        auto from_angle = [&](double angle, const JsonValue& at, const char* key, double side) {
            if (!(angle > 0 && angle < 3.14159)) at.require(key).fail("expected an angle in (0, pi) radians");
            return 0.5 * side / std::tan(0.5 * angle);
        };
        const double fx = fl_x ? *fl_x : from_angle(*angle_x, where, "camera_angle_x", Wd);
        const double fy = fl_y ? *fl_y : angle_y ? from_angle(*angle_y, y_where, "camera_angle_y", Hd) : fx;
        Intrinsics k;
        k.fx = float(fx * sx);
        k.fy = float(fy * sy);
        // The test every camera takes (a camera_angle_x of 1e-30 rendered black), at the views' size, named by the
        // key the failing focal length comes from.
        if (const std::string why = focal_problem(k.fx, k.fy, width, height); !why.empty()) {
            const char* x_key = fl_x ? "fl_x" : "camera_angle_x";
            const bool x_axis = why.rfind("fx", 0) == 0 || !(fl_y || angle_y);
            const char* key = x_axis ? x_key : fl_y ? "fl_y" : "camera_angle_y";
            std::string scaled;
            if (sized && (sx != 1 || sy != 1))
                scaled = "scaled from " + number_text(*w) + "x" + number_text(*h) + " to the views' " +
                         std::to_string(width) + "x" + std::to_string(height) + ", ";
            (x_axis ? where : y_where).require(key).fail(scaled + why);
        }
        k.cx = float(cx ? *cx * sx : 0.5 * W);
        k.cy = float(cy ? *cy * sy : 0.5 * H);
        return k;
    }
};

void read_frames(const JsonValue& root, const std::filesystem::path& folder, const Camera& camera,
                 std::vector<Camera>& views, std::vector<ViewImage>& images) {
    Lens top;
    top.read(root);
    const JsonValue frames = root.require("frames");
    if (frames.array_size() == 0) frames.fail("expected at least one frame");
    for (size_t i = 0; i < frames.array_size(); ++i) {
        const JsonValue frame = frames[i];
        if (!frame.json().is_object()) frame.fail("expected an object");
        Lens lens = top;
        lens.read(frame);
        Camera view = camera;
        view.intrinsics = lens.at(frame, camera.width, camera.height);
        view.fov_y = fov_y_of(view.intrinsics->fy, camera.height);
        const JsonValue m = frame.require("transform_matrix");
        const char* shape = "expected a 4x4 camera-to-world matrix: a list of 4 rows of 4 numbers";
        if (!m.json().is_array() || m.array_size() != 4) m.fail(shape);
        double rows[4][4];
        for (size_t r = 0; r < 4; ++r) {
            if (!m[r].json().is_array() || m[r].array_size() != 4) m.fail(shape);
            for (size_t c = 0; c < 4; ++c) {
                if (!m[r][c].json().is_number()) m.fail(shape);
                rows[r][c] = m[r][c].json().get<double>();
                if (!std::isfinite(rows[r][c])) m.fail(shape);
            }
        }
        if (std::string why = pose_from_matrix(rows, view); !why.empty()) m.fail(why);
        const JsonValue file_path = frame.require("file_path");
        std::filesystem::path file = file_path.nonempty_string();
        if (!file.has_extension()) file += ".png";   // the Blender scenes' "./train/r_0"
        const Resolution size = lens.w && lens.h ? Resolution{uint32_t(*lens.w), uint32_t(*lens.h)} : Resolution{};
        images.push_back({(folder / file).lexically_normal().generic_string(), size,
                          file_path.file() + ": " + shown_path(file_path.path())});
        views.push_back(std::move(view));
    }
}

void read_nerf(const JsonValue& value, const std::filesystem::path& base_dir, const Camera& camera,
               std::vector<Camera>& views, std::vector<ViewImage>& images) {
    const JsonValue where = value.require("nerf");
    const std::string shown = where.nonempty_string();
    const std::string text = read_file(base_dir / shown, shown, where);
    try {
        const Json document = parse_json(text, shown);
        const JsonValue root(document, "", shown);
        if (!root.json().is_object()) root.fail("expected an object with \"frames\"");
        read_frames(root, std::filesystem::path(shown).parent_path(), camera, views, images);
    } catch (const SceneError& e) {
        where.fail(e.what());   // "<scene>: views.nerf: <transforms file>: frames[3]...: <what>"
    }
}

} // namespace

const ViewSource nerf_view_source{"nerf", {}, read_nerf};

} // namespace adjoint::app::detail
