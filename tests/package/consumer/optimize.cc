// A user program against the installed renderer library: loads a scene, runs a short optimization through
// Adjoint::renderer and prints the loss before and after. argv[1] is the scene file.
#include <adjoint/app/optimization.h>

#include <cstdio>

int main(int argc, char** argv) {
    using namespace adjoint;
    if (argc < 2) {
        std::fprintf(stderr, "usage: adjoint-consumer-optimize SCENE\n");
        return 2;
    }
    try {
        app::LoadOptions options;
        options.resolution = app::Resolution{64, 64};
        app::Scene scene = app::load_scene(argv[1], options);
        scene.optimize->iterations = 30;
        Context ctx;
        Device device = ctx.create_device();
        app::Optimizer opt(device, scene);
        app::IterationReport first = opt.step(), last = first;
        while (opt.iteration() < opt.total_iterations()) last = opt.step();
        std::printf("adjoint-consumer-optimize: %u iterations, loss fell %s (%.3g -> %.3g), psnr %.1f dB\n",
                    opt.iteration(), last.loss < 0.2 * first.loss ? "yes" : "no", first.loss, last.loss,
                    last.image_psnr);
        return last.loss < 0.2 * first.loss ? 0 : 1;
    } catch (const Error& e) {
        std::fprintf(stderr, "adjoint-consumer-optimize failed: %s\n", e.what());
        return 1;
    }
}
