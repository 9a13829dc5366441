// The seed guide's first example on the device: y = x*sin(x) and its gradient from $autodiff, printed
// beside the analytic derivative sin(x) + x*cos(x).
#include <adjoint/adjoint.h>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace adjoint;

int main() try {
    Context ctx;
    Device device = ctx.create_device();
    Stream stream = device.create_stream();
    Kernel1D grad_kernel = [](BufferFloat x_buf, BufferFloat y_buf, BufferFloat grad_buf) noexcept {
        auto i = dispatch_id().x;
        Float x = x_buf.read(i);
        $autodiff {
            requires_grad(x);
            Float y = x * sin(x);
            backward(y);
            y_buf.write(i, y);
            grad_buf.write(i, grad(x));
        };
    };
    auto shader = device.compile(grad_kernel, {.name = "seed_x_sin_x"});
    std::vector<float> xs{-2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, 3.0f};
    std::vector<float> ys(xs.size()), gs(xs.size());
    auto x = device.create_buffer<float>(xs.size());
    auto y = device.create_buffer<float>(xs.size());
    auto g = device.create_buffer<float>(xs.size());
    stream << x.copy_from(xs.data()) << shader(x, y, g).dispatch(uint32_t(xs.size())) << y.copy_to(ys.data())
           << g.copy_to(gs.data()) << synchronize();
    std::printf("device: %s\n%8s %12s %12s %12s\n", device.name().c_str(), "x", "x*sin(x)", "grad", "analytic");
    for (size_t i = 0; i < xs.size(); ++i)
        std::printf("%8.3f %12.6f %12.6f %12.6f\n", double(xs[i]), double(ys[i]), double(gs[i]),
                    std::sin(double(xs[i])) + xs[i] * std::cos(double(xs[i])));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "adjoint-seed-example: %s\n", e.what());
    return 1;
}
