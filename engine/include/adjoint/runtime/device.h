// The host API: Context, Device, Buffer, Image, Shader, Stream and the commands a stream takes.
#pragma once
#include <adjoint/autodiff/autodiff.h>   // TapeUse
#include <adjoint/core/error.h>
#include <adjoint/dsl/type_desc.h>
#include <adjoint/ir/function.h>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adjoint {

namespace detail {
class DeviceImpl;
class StreamImpl;
class BufferImpl;
class ImageImpl;
class ShaderImpl;
} // namespace detail

// A command for a stream: recorded in order, executed at synchronize().
class Command {
public:
    explicit Command(std::function<void(detail::StreamImpl&)> run) : run_(std::move(run)) {}
    void operator()(detail::StreamImpl& s) const { run_(s); }

private:
    std::function<void(detail::StreamImpl&)> run_;
};

Command synchronize();

// Textures (runtime/texture.h).
template <typename T>
class Texture2D;
template <typename T>
class TextureSet;
struct TextureOptions;
struct TextureDesc;

enum class PixelFormat { RGBA32F };

// A default-constructed Buffer or Image is empty: copying it or passing it to a kernel is an Error.
template <typename T>
class Buffer {
public:
    Buffer() = default;
    Buffer(std::shared_ptr<detail::BufferImpl> impl, size_t count) : impl_(std::move(impl)), count_(count) {}
    size_t size() const { return count_; }
    size_t size_bytes() const { return count_ * stride(); }
    static constexpr size_t stride() { return sizeof(T); }
    Command copy_from(const void* src) const;   // src holds size() elements; read when the command is recorded
    Command copy_to(void* dst) const;           // dst is written by the next synchronize()
    // Elements [offset, offset + count) only (src/dst hold count elements), so reading one value needs no
    // full copy. A range past size() is an Error when the command is made.
    Command copy_from(const void* src, size_t offset, size_t count) const;
    Command copy_to(void* dst, size_t offset, size_t count) const;
    Command fill_zero() const;
    // On the device, in stream order: all of this buffer into `dst` (another buffer of as many elements); or
    // elements [offset, offset + count) into dst's [dst_offset, dst_offset + count) (a range past either buffer's
    // size is an Error when the command is made).
    Command copy_to(const Buffer<T>& dst) const;
    Command copy_to(const Buffer<T>& dst, size_t offset, size_t dst_offset, size_t count) const;
    // The same memory seen as elements of U (LuisaCompute's BufferView::as), size_bytes() / sizeof(U) of them:
    // an image's floats as float4 pixels, say. A size that is not a whole number of U is an Error.
    template <typename U>
    Buffer<U> as() const;
    const std::shared_ptr<detail::BufferImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::BufferImpl> impl_;
    size_t count_ = 0;
};

// A buffer paired with a gradient buffer, for DiffBufferVar<T> kernel parameters: inside $autodiff the
// kernel's reads of `value` are differentiable and their adjoints are added into `grad`, which holds
// size() * components floats, tightly packed (a float3 element has 3 gradient floats, not 4). Gradients
// accumulate across dispatches until zero_grad(). Also passes where a Buffer<T> is expected (its values).
template <typename T>
class DiffBuffer {
public:
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, float2> || std::is_same_v<T, float3> ||
                      std::is_same_v<T, float4>,
                  "a differentiable buffer holds float, float2, float3 or float4");
    static constexpr size_t components = sizeof(T) == 4 ? 1 : sizeof(T) == 8 ? 2 : std::is_same_v<T, float3> ? 3 : 4;
    Buffer<T> value;
    Buffer<float> grad;
    size_t size() const { return value.size(); }
    Command zero_grad() const { return grad.fill_zero(); }
};

template <typename T>
class Image {
public:
    Image() = default;
    explicit Image(std::shared_ptr<detail::ImageImpl> impl) : impl_(std::move(impl)) {}
    uint32_t width() const;                     // 0 for an empty image
    uint32_t height() const;
    Command copy_from(const void* src) const;   // width*height float4 texels, tightly packed
    Command copy_to(void* dst) const;
    const std::shared_ptr<detail::ImageImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::ImageImpl> impl_;
};

// One argument of a dispatch, as the runtime checks it against the kernel's parameter.
struct DispatchArg {
    enum class Kind { Buffer, Image, Value } kind;
    const ir::Type* type = nullptr;      // buffer element type, or value type
    std::shared_ptr<detail::BufferImpl> buffer;
    std::shared_ptr<detail::ImageImpl> image;
    std::vector<std::byte> bytes;        // host layout of a value
    // A C++ number (int, unsigned, float, double, bool...) for a scalar parameter, converted by check() when
    // the parameter can hold it: Float takes any number but a bool (rounded to float); Int and UInt an
    // integer in their range; Bool a bool. Anything else is an Error naming the kernel and the argument.
    double scalar = 0;
    bool is_plain_number = false;
    std::shared_ptr<detail::BufferImpl> grad;   // a DiffBuffer's gradient buffer (Kind::Buffer)
    bool is_integer = false;             // the number was of an integer type
    bool is_bool = false;                // the number was a bool
    uint64_t integer = 0;                // an integer's exact bits (two's complement), for uint64 parameters
    bool is_negative = false;            // the integer was below zero
    // An argument that binds several parameters (a texture): what it is ("texture<float3>"), and one
    // argument per parameter. Empty for ordinary arguments.
    std::string bundle{};
    std::vector<DispatchArg> parts{};
};

template <typename T>
DispatchArg to_dispatch_arg(const Buffer<T>& b) {
    return DispatchArg{DispatchArg::Kind::Buffer, type_of<T>(), b.impl(), nullptr, {}, 0, false, nullptr};
}
template <typename T>
DispatchArg to_dispatch_arg(const DiffBuffer<T>& b) {
    DispatchArg a = to_dispatch_arg(b.value);
    a.grad = b.grad.impl();
    return a;
}
template <typename T>
DispatchArg to_dispatch_arg(const Image<T>& img) {
    return DispatchArg{DispatchArg::Kind::Image, nullptr, nullptr, img.impl(), {}, 0, false, nullptr};
}
template <typename T>
    requires(DslValue<T> && !std::is_arithmetic_v<T>)
DispatchArg to_dispatch_arg(const T& v) {
    DispatchArg a{DispatchArg::Kind::Value, type_of<T>(), nullptr, nullptr, {}, 0, false, nullptr};
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
}
template <typename T>
    requires std::is_arithmetic_v<T>
DispatchArg to_dispatch_arg(const T& v) {
    DispatchArg a{DispatchArg::Kind::Value, nullptr, nullptr, nullptr, {}, double(v), true, nullptr};
    a.is_integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;
    a.is_bool = std::is_same_v<T, bool>;
    if constexpr (std::is_integral_v<T>) a.integer = uint64_t(v);
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) a.is_negative = v < 0;
    return a;
}

// A compiled kernel. shader(args...) checks the arguments against the kernel's parameters (count and
// types; an Error names the kernel and the argument) and .dispatch(w[, h[, d]]) makes the command.
class ShaderBase {
public:
    class Invocation {
    public:
        Invocation(std::shared_ptr<detail::ShaderImpl> shader, std::vector<DispatchArg> args)
            : shader_(std::move(shader)), args_(std::move(args)) {}
        Command dispatch(uint32_t w, uint32_t h = 1, uint32_t d = 1) const;

    private:
        std::shared_ptr<detail::ShaderImpl> shader_;
        std::vector<DispatchArg> args_;
    };

    // Shaders stay valid after the device's kernel cache forgets their kernel (clear_kernel_cache, eviction).
    // The arguments' checks name them as the user wrote them; a bundle (a texture) then binds its parts.
    explicit ShaderBase(std::shared_ptr<detail::ShaderImpl> impl) : impl_(std::move(impl)) {}
    template <typename... A>
    Invocation operator()(const A&... args) const {
        std::vector<DispatchArg> list;
        list.reserve(sizeof...(A));
        (list.push_back(to_dispatch_arg(args)), ...);
        check(list);
        return Invocation(impl_, std::move(list));
    }
    const std::string& name() const;
    const std::string& glsl() const;       // the generated GLSL
    const std::string& ir_text() const;    // the IR after all passes, as printed
    bool cache_hit() const;                // was the SPIR-V found in the cache
    // Per autodiff loop: where it is and how many bytes of tape each thread uses (Slang's checkpoint report).
    const std::vector<TapeUse>& tape_report() const;
    const std::shared_ptr<detail::ShaderImpl>& impl() const { return impl_; }

private:
    void check(std::vector<DispatchArg>& args) const;   // and replaces each bundle by its parts
    std::shared_ptr<detail::ShaderImpl> impl_;
};

template <uint32_t Dim>
class Shader : public ShaderBase {
public:
    using ShaderBase::ShaderBase;
};

// Commands are taken one at a time: several threads may share a Stream (each command is recorded whole), and
// streams of one device may run on different threads at once.
class Stream {
public:
    explicit Stream(std::shared_ptr<detail::StreamImpl> impl) : impl_(std::move(impl)) {}
    Stream& operator<<(const Command& c);
    const std::shared_ptr<detail::StreamImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::StreamImpl> impl_;
};

struct ShaderOptions {
    // Overrides the kernel's name (file and line by default). The `{}` keeps -Wextra quiet about
    // {.block = ...} leaving it out.
    std::string name{};
    // The kernel's block (work-group) size; {0, 0, 0} keeps the kernel's own: set_block_size() in the kernel,
    // else 256 (1D), 16 x 16 (2D), 8 x 8 x 4 (3D). A kernel that calls set_block_size() takes no other.
    std::array<uint32_t, 3> block{0, 0, 0};
    // The kernel may be given one buffer through several parameters and write it through some: it promises to
    // touch disjoint elements through each (a buffer's float4s beside its other floats, say), so no access
    // through one can be reordered past a write through another. Without it such a dispatch is refused.
    bool disjoint_views = false;
};

// Thread-safe: buffers, images, streams and kernels may be created and compiled from several threads at once.
class Device {
public:
    explicit Device(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}
    std::string name() const;
    // The most bytes one kernel argument (a storage-buffer binding) may cover: 128 MiB on lavapipe.
    uint64_t max_buffer_bytes() const;
    Stream create_stream();
    // Threads per subgroup (what subgroup_size() returns in kernels; 8 on lavapipe with 256-bit vectors),
    // and 0 when the device has no subgroup operations in compute shaders.
    uint32_t subgroup_size() const;
    // Whether kernels may use atomics on uint64 buffers (shaderBufferInt64Atomics; lavapipe and most GPUs have
    // them): a caller picks another algorithm where not, as compiling one is refused.
    bool int64_atomics() const;
    // Bytes of this device's Buffers alive now, DiffBuffers' gradients and texture sets included (images not):
    // what a cache of renderers can weigh itself by (adjoint.torch.render's optimizers).
    size_t buffer_bytes_in_use() const;

    template <typename T>
    Buffer<T> create_buffer(size_t count) {
        return Buffer<T>(make_buffer(count * sizeof(T)), count);
    }
    template <typename T>
    DiffBuffer<T> create_diff_buffer(size_t count) {
        return DiffBuffer<T>{create_buffer<T>(count), create_buffer<float>(count * DiffBuffer<T>::components)};
    }
    template <typename T>
    Image<T> create_image(PixelFormat format, uint32_t width, uint32_t height) {
        static_assert(std::is_same_v<T, float>, "images hold float4 texels: create_image<float>");
        return Image<T>(make_image(format, width, height));
    }
    // A 2D texture with mip chain of float, float2, float3 or float4 texels; several of any sizes in one set
    // (runtime/texture.h).
    template <typename T>
    Texture2D<T> create_texture(uint32_t width, uint32_t height, const TextureOptions& options);
    template <typename T>
    Texture2D<T> create_texture(uint32_t width, uint32_t height);
    template <typename T>
    TextureSet<T> create_texture_set(const std::vector<TextureDesc>& textures);
    template <typename K>
    Shader<K::dimension> compile(const K& kernel, const ShaderOptions& options = {}) {
        return Shader<K::dimension>(compile_function(kernel.function(), options));
    }

    // Validation messages seen so far (ADJOINT_VALIDATION=1 enables the layer).
    uint64_t validation_message_count() const;
    std::vector<std::string> validation_messages() const;
    // SPIR-V cache statistics of this device.
    uint64_t cache_hits() const;
    uint64_t cache_misses() const;
    // Compiled kernels (lowering, GLSL, pipeline: ~100 kB each) are kept for reuse, least recently used
    // forgotten first beyond the capacity (default 256; 0 keeps none). Clearing forgets them all, and the
    // SPIR-V held in memory with them: the next compile reads the disk cache. Shaders handed out stay valid.
    static constexpr size_t kDefaultKernelCacheCapacity = 256;
    void set_kernel_cache_capacity(size_t kernels);
    size_t kernel_cache_capacity() const;
    size_t kernel_cache_size() const;
    void clear_kernel_cache();
    const std::shared_ptr<detail::DeviceImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::BufferImpl> make_buffer(size_t bytes);
    std::shared_ptr<detail::ImageImpl> make_image(PixelFormat format, uint32_t width, uint32_t height);
    std::shared_ptr<detail::ShaderImpl> compile_function(const std::shared_ptr<ir::Function>& f,
                                                        const ShaderOptions& options);
    std::shared_ptr<detail::DeviceImpl> impl_;
};

// A physical device as the Vulkan loader lists it (Context::list_devices), in enumeration order.
struct PhysicalDevice {
    uint32_t index = 0;   // DeviceOptions::device = "<index>" (ADJOINT_DEVICE=<index>) picks it
    std::string name;     // VkPhysicalDeviceProperties::deviceName
    std::string type;     // "discrete", "integrated", "virtual", "cpu" or "other"
};

// How a device is chosen and run. A default-constructed DeviceOptions is the engine's defaults, whatever the
// environment says; from_environment() reads the environment variables once, and is what
// Context::create_device() uses when given no options.
struct DeviceOptions {
    // ADJOINT_DEVICE: empty ranks the devices (discrete > integrated > virtual > cpu); all digits picks that
    // index of list_devices(); anything else the first device whose name contains it (case-insensitive).
    std::string device;
    // ADJOINT_VALIDATION (on unless unset, empty or "0"): the Vulkan validation layer, counting its messages;
    // a layer that cannot be loaded is an Error.
    bool validation = false;
    // ADJOINT_NO_FLOAT_ATOMICS (set and not "0" turns this off): native float atomics where the device has
    // them; off, compare-and-swap loops everywhere.
    bool float_atomics = true;
    // ADJOINT_NO_TEXEL_READS (set and not "0" turns this off): on CPU devices (lavapipe), the buffers a kernel
    // only reads bound as uniform texel buffers, which lavapipe reads several times faster than storage
    // buffers; off, storage buffers everywhere (GUIDE.md, "Read-only buffers on lavapipe").
    bool texel_reads = true;
    // ADJOINT_LOOP_LIMIT=n: check every loop against n iterations (0: no check); unset, lavapipe's 65,535 on
    // lavapipe and none elsewhere (GUIDE.md, "Loop iteration limit on lavapipe").
    std::optional<uint32_t> loop_limit;
    // ADJOINT_LOCAL_TAPE_BYTES=n: the private memory a thread's $autodiff tapes may take in all, per kernel;
    // tapes beyond it go to the runtime's scratch buffer. Unset, 16 KB on CPU devices and 8 KB elsewhere
    // (NVIDIA's driver refuses pipelines with 16 KB of private memory per thread; GUIDE.md, "Loops").
    std::optional<uint32_t> local_tape_bytes;

    static DeviceOptions from_environment();
};

class Context {
public:
    explicit Context(std::string_view program_path = {});
    // "vulkan" (the default and only backend), with DeviceOptions::from_environment().
    Device create_device(std::string_view backend = "vulkan");
    Device create_device(const DeviceOptions& options, std::string_view backend = "vulkan");
    // The physical devices the Vulkan loader sees (usable or not), in enumeration order.
    std::vector<PhysicalDevice> list_devices() const;

private:
    std::string program_path_;
};

namespace detail {
// A range of elements of a buffer: `first` and `count` in elements, `stride` bytes each.
struct ElementRange {
    size_t first = 0, count = 0, size = 0, stride = 0;
};
Command buffer_copy_from(const std::shared_ptr<BufferImpl>& b, const void* src, const ElementRange& range);
Command buffer_copy_to(const std::shared_ptr<BufferImpl>& b, void* dst, const ElementRange& range);
Command buffer_fill_zero(const std::shared_ptr<BufferImpl>& b);
[[noreturn]] void fail_copy_sizes(size_t count, size_t dst_count);
Command buffer_copy(const std::shared_ptr<BufferImpl>& src, const std::shared_ptr<BufferImpl>& dst,
                    const ElementRange& from, const ElementRange& to);
Command image_copy_from(const std::shared_ptr<ImageImpl>& img, const void* src);
Command image_copy_to(const std::shared_ptr<ImageImpl>& img, void* dst);
uint32_t image_width(const ImageImpl* img);
uint32_t image_height(const ImageImpl* img);
} // namespace detail

template <typename T>
Command Buffer<T>::copy_from(const void* src) const {
    return detail::buffer_copy_from(impl_, src, {0, count_, count_, stride()});
}
template <typename T>
Command Buffer<T>::copy_to(void* dst) const {
    return detail::buffer_copy_to(impl_, dst, {0, count_, count_, stride()});
}
template <typename T>
Command Buffer<T>::copy_from(const void* src, size_t offset, size_t count) const {
    return detail::buffer_copy_from(impl_, src, {offset, count, count_, stride()});
}
template <typename T>
Command Buffer<T>::copy_to(void* dst, size_t offset, size_t count) const {
    return detail::buffer_copy_to(impl_, dst, {offset, count, count_, stride()});
}
template <typename T>
Command Buffer<T>::fill_zero() const { return detail::buffer_fill_zero(impl_); }
template <typename T>
Command Buffer<T>::copy_to(const Buffer<T>& dst) const {
    if (impl_ && dst.impl() && count_ != dst.size())
        detail::fail_copy_sizes(count_, dst.size());
    return detail::buffer_copy(impl_, dst.impl(), {0, count_, count_, stride()}, {0, count_, dst.size(), stride()});
}
template <typename T>
Command Buffer<T>::copy_to(const Buffer<T>& dst, size_t offset, size_t dst_offset, size_t count) const {
    return detail::buffer_copy(impl_, dst.impl(), {offset, count, count_, stride()},
                               {dst_offset, count, dst.size(), stride()});
}
template <typename T>
template <typename U>
Buffer<U> Buffer<T>::as() const {
    static_assert(std::is_trivially_copyable_v<U>, "a buffer is seen as plain values");
    if (size_bytes() % sizeof(U) != 0)
        fail("Buffer::as: ", count_, " elements of ", sizeof(T), " bytes are not a whole number of ", sizeof(U),
             "-byte elements");
    return Buffer<U>(impl_, size_bytes() / sizeof(U));
}
template <typename T>
uint32_t Image<T>::width() const { return detail::image_width(impl_.get()); }
template <typename T>
uint32_t Image<T>::height() const { return detail::image_height(impl_.get()); }
template <typename T>
Command Image<T>::copy_from(const void* src) const { return detail::image_copy_from(impl_, src); }
template <typename T>
Command Image<T>::copy_to(void* dst) const { return detail::image_copy_to(impl_, dst); }

} // namespace adjoint
