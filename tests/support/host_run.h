// Runs a recorded kernel in the host interpreter (the oracle) and on the device, with the same arguments.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/pipeline/lower.h>
#include <adjoint/ir/interpreter.h>

#include <array>
#include <cstring>
#include <memory>
#include <vector>

namespace adjoint::test {

// Texels of a host-side image, in the layout Image::copy_from takes (tightly packed float4).
struct HostImage {
    uint32_t width = 0, height = 0;
    std::vector<float4> texels;
};

namespace detail_run {

// One interpreter argument and the resource record it points to (kept alive alongside).
struct InterpArg {
    ir::HostArg arg;
    std::unique_ptr<ir::HostResource> resource;
};

template <typename T>
InterpArg interp_arg(std::vector<T>& v) {
    InterpArg a;
    a.resource = std::make_unique<ir::HostResource>();
    a.resource->data = reinterpret_cast<std::byte*>(v.data());
    a.resource->bytes = v.size() * sizeof(T);
    return a;
}

inline InterpArg interp_arg(HostImage& img) {
    InterpArg a;
    a.resource = std::make_unique<ir::HostResource>();
    a.resource->data = reinterpret_cast<std::byte*>(img.texels.data());
    a.resource->bytes = img.texels.size() * sizeof(float4);
    a.resource->width = img.width;
    a.resource->height = img.height;
    return a;
}

template <typename T>
    requires DslValue<T>
InterpArg interp_arg(T& value) {
    InterpArg a;
    adjoint::detail::to_lanes(value, a.arg.value);
    return a;
}

} // namespace detail_run

// How to interpret: the emulated subgroup size, a block size other than the kernel's ({0, 0, 0}: the
// kernel's), as ShaderOptions::block gives one to the device, and the lowering's options (a device's: its loop
// check, lavapipe's loop rotation).
struct InterpretOptions {
    uint32_t subgroup_size = 32;
    std::array<uint32_t, 3> block{0, 0, 0};
    pipeline::LowerOptions lower{};
};

// Interprets `kernel` (lowered exactly as the runtime lowers it) over every thread of `size`. Buffers are
// std::vectors (written in place), images HostImage, values plain DSL values.
template <typename K, typename... A>
void interpret_with(const InterpretOptions& options, const K& kernel, std::array<uint32_t, 3> size, A&... args) {
    auto lowered = pipeline::lower(*kernel.function(), "", options.lower);
    if (options.block != std::array<uint32_t, 3>{0, 0, 0}) lowered.function->block_size = options.block;
    std::vector<detail_run::InterpArg> holders;
    (holders.push_back(detail_run::interp_arg(args)), ...);
    std::vector<ir::HostArg> host_args;
    for (auto& h : holders) {
        ir::HostArg a = h.arg;
        a.resource = h.resource.get();
        host_args.push_back(std::move(a));
    }
    ir::Interpreter interp(*lowered.function, std::move(host_args), size);
    interp.subgroup_size = options.subgroup_size;
    interp.run_all();
}

template <typename K, typename... A>
void interpret(const K& kernel, std::array<uint32_t, 3> size, A&... args) {
    interpret_with(InterpretOptions{}, kernel, size, args...);
}

template <typename T>
Buffer<T> upload(Device& device, Stream& stream, const std::vector<T>& host) {
    auto b = device.create_buffer<T>(host.size());
    stream << b.copy_from(host.data());
    return b;
}

template <typename T>
std::vector<T> download(Stream& stream, const Buffer<T>& b) {
    std::vector<T> out(b.size());
    stream << b.copy_to(out.data()) << synchronize();
    return out;
}

} // namespace adjoint::test
