// The seed guide's first example, run on the device: y = x*sin(x) for a few x, printed as a table.
#include <adjoint/adjoint.h>

#include <cstdio>
#include <vector>

using namespace adjoint;

int main() try {
    Context ctx;
    Device device = ctx.create_device();
    Stream stream = device.create_stream();
    Kernel1D forward = [](BufferFloat x_buf, BufferFloat y_buf) noexcept {
        auto i = dispatch_id().x;
        Float x = x_buf.read(i);
        y_buf.write(i, x * sin(x));
    };
    auto shader = device.compile(forward);
    std::vector<float> xs{-2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, 3.0f};
    std::vector<float> ys(xs.size());
    auto x = device.create_buffer<float>(xs.size());
    auto y = device.create_buffer<float>(xs.size());
    stream << x.copy_from(xs.data()) << shader(x, y).dispatch(uint32_t(xs.size())) << y.copy_to(ys.data())
           << synchronize();
    std::printf("device: %s\n%8s %12s\n", device.name().c_str(), "x", "x*sin(x)");
    for (size_t i = 0; i < xs.size(); ++i) std::printf("%8.3f %12.6f\n", double(xs[i]), double(ys[i]));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "adjoint-seed-example: %s\n", e.what());
    return 1;
}
