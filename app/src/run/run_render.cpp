// adjoint-render's job: one view of a scene, or every view (beside its dataset photo), optionally with an
// optimization's values, to PNGs.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/interrupt.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include "run/report_error.h"

#include <cmath>
#include <iostream>

namespace adjoint::app {

Image to_image(const LinearImage& in) {
    Image out(int(in.width), int(in.height), 3);
    for (size_t i = 0; i < in.texels.size(); ++i)
        for (int c = 0; c < 3; ++c) out.pixels[i * 3 + c] = in.texels[i][c];
    return out;
}

namespace {

// The view's render, refused where a pixel is not a finite number: written, it would read as black (a soft
// gamma of 1e-40, refused by the loader since, made a whole sphere NaN, exit 0). adjoint-optimize stops so on a
// non-finite loss.
const LinearImage& finite_render(const LinearImage& image, uint32_t view) {
    size_t bad = 0;
    for (const float4& t : image.texels)
        bad += !(std::isfinite(t.x) && std::isfinite(t.y) && std::isfinite(t.z) && std::isfinite(t.w));
    if (bad > 0)
        fail("view ", view, " rendered ", bad, " of ", image.texels.size(),
             " pixels as NaN or infinity (the scene's numbers overflow the renderer's floats: a light's intensity "
             "near float's largest, a point light on a surface); its picture was not written");
    return image;
}

// The render (left) beside its photo (right), both at the view's size.
Image side_by_side(const LinearImage& render, const LinearImage& photo) {
    const int w = int(render.width), h = int(render.height);
    Image out(2 * w, h, 3);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c) {
                const size_t i = size_t(y) * size_t(w) + size_t(x);
                out.at(x, y, c) = render.texels[i][c];
                out.at(w + x, y, c) = photo.texels[i][c];
            }
    return out;
}

// The photos of a dataset target (optimize.target "views"), or none.
const std::vector<LinearImage>* dataset_photos(const Scene& scene) {
    if (!scene.optimize || scene.optimize->target_is_scene || scene.view_images.empty()) return nullptr;
    const auto& photos = scene.optimize->target_images;
    return photos.size() == scene.views.size() ? &photos : nullptr;
}

} // namespace

int run_render(const RenderOptions& o, std::ostream& err) {
    Scene scene;
    try {
        LoadOptions lo;
        if (o.resolution) lo.resolution = *o.resolution;
        scene = load_scene(o.scene, lo);
        if (o.params) apply_params_file(scene, *o.params);
        if (!o.all_views && (o.view < 0 || size_t(o.view) >= scene.views.size()))
            throw SceneError(scene.display_name, "views",
                             "--view " + std::to_string(o.view) + " is out of range: the scene has " +
                                 std::to_string(scene.views.size()) + " view(s)");
        try {
            // An output that cannot be written is the user's input: checked before rendering.
            if (o.all_views) {
                ensure_directory(*o.all_views);
                check_writable(*o.all_views / "view_0.png");
                for (size_t v = 0; v < scene.views.size(); ++v)   // no output replaces a symlink, FIFO or device
                    for (const char* suffix : {".png", "_side.png"})
                        check_replaceable(*o.all_views / ("view_" + std::to_string(v) + suffix));
            } else {
                // The file is PNG whatever its name: another extension would hold PNG bytes under a wrong name.
                if (lowercase_extension(o.out) != ".png")
                    fail(o.out.string(), ": adjoint-render writes PNG images: name the file .png");
                check_writable(o.out);
            }
        } catch (const Error& e) {
            throw SceneError("", o.all_views ? "--all-views" : "--out", e.what());
        }
    } catch (const Error& e) {
        return report_error(err, e, exit_bad_input);
    }
    for (uint32_t v = 0; v < scene.views.size(); ++v)
        if (o.all_views || v == uint32_t(o.view)) err << empty_view_warning(scene, v);
    // The caller's InterruptGuard turns SIGINT/SIGTERM into a flag, checked between the steps: exit 130.
    if (interrupt_requested()) return exit_interrupted;
    try {
        Context ctx;
        Device device = ctx.create_device();
        SceneRenderer renderer(device, scene);
        if (interrupt_requested()) return exit_interrupted;
        if (!o.all_views) {
            const Image picture = to_image(finite_render(renderer.render(uint32_t(o.view)), uint32_t(o.view)));
            if (interrupt_requested()) return exit_interrupted;
            write_png(o.out, picture);
            return exit_ok;
        }
        // Each file is written atomically (write_png): a kill leaves earlier views complete, none half-written.
        const std::vector<LinearImage>* photos = dataset_photos(scene);
        for (uint32_t v = 0; v < scene.views.size(); ++v) {
            if (interrupt_requested()) return exit_interrupted;
            const LinearImage picture = renderer.render(v);
            finite_render(picture, v);
            const std::string name = "view_" + std::to_string(v);
            write_png(*o.all_views / (name + ".png"), to_image(picture));
            if (photos) write_png(*o.all_views / (name + "_side.png"), side_by_side(picture, (*photos)[v]));
        }
    } catch (const Error& e) {
        return report_error(err, e, exit_failure);
    }
    return exit_ok;
}

} // namespace adjoint::app
