// A user program against the installed engine: a struct, a callable and a kernel run, results printed.
#include <adjoint/adjoint.h>

#include <cstdio>
#include <vector>

struct Item {
    adjoint::float3 dir;
    float weight;
};
ADJOINT_STRUCT(Item, dir, weight)

using namespace adjoint;

int main(int argc, char** argv) {
    try {
        Context ctx{argc > 0 ? argv[0] : ""};
        Device device = ctx.create_device();
        Stream stream = device.create_stream();
        Callable weigh = [](Float3 d, Float w) noexcept { return length(d) * w; };
        Kernel1D k = [&](BufferVar<Item> items, BufferFloat out, Float scale) noexcept {
            auto i = dispatch_id().x;
            Var<Item> it = items.read(i);
            out.write(i, weigh(it.dir, it.weight) * scale + 1.0f);
        };
        auto shader = device.compile(k);
        std::vector<Item> host{{float3(3, 4, 0), 1.0f}, {float3(0, 0, 2), 2.0f}, {float3(1, 2, 2), 3.0f}};
        std::vector<float> result(host.size());
        auto items = device.create_buffer<Item>(host.size());
        auto out = device.create_buffer<float>(host.size());
        stream << items.copy_from(host.data()) << shader(items, out, 10.0f).dispatch(uint32_t(host.size()))
               << out.copy_to(result.data()) << synchronize();
        std::printf("adjoint-consumer: %g %g %g (validation messages: %llu)\n", result[0], result[1], result[2],
                    static_cast<unsigned long long>(device.validation_message_count()));
        return 0;
    } catch (const Error& e) {
        std::fprintf(stderr, "adjoint-consumer failed: %s\n", e.what());
        return 1;
    }
}
