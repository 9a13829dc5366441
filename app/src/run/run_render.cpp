// adjoint-render's job: one view of a scene (optionally with an optimization's values) to a PNG.
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/run.h>

#include "run/report_error.h"

#include <iostream>

namespace adjoint::app {

Image to_image(const LinearImage& in) {
    Image out(int(in.width), int(in.height), 3);
    for (size_t i = 0; i < in.texels.size(); ++i)
        for (int c = 0; c < 3; ++c) out.pixels[i * 3 + c] = in.texels[i][c];
    return out;
}

int run_render(const RenderOptions& o, std::ostream& err) {
    Scene scene;
    try {
        LoadOptions lo;
        if (o.resolution) lo.resolution = *o.resolution;
        scene = load_scene(o.scene, lo);
        if (o.params) apply_params_file(scene, *o.params);
        if (o.view < 0 || size_t(o.view) >= scene.views.size())
            throw SceneError(scene.display_name, "views",
                             "--view " + std::to_string(o.view) + " is out of range: the scene has " +
                                 std::to_string(scene.views.size()) + " view(s)");
        try {
            check_writable(o.out);   // an output that cannot be written is the user's input: checked before rendering
        } catch (const Error& e) {
            throw SceneError("", "--out", e.what());
        }
    } catch (const Error& e) {
        return report_error(err, e, exit_bad_input);
    }
    try {
        Context ctx;
        Device device = ctx.create_device();
        SceneRenderer renderer(device, scene);
        write_png(o.out, to_image(renderer.render(uint32_t(o.view))));
    } catch (const Error& e) {
        return report_error(err, e, exit_failure);
    }
    return exit_ok;
}

} // namespace adjoint::app
