// What the Python module's files share: the one device every Scene and Optimization of a process uses, the
// Python-side scene (a loaded Scene and its renderer, rebuilt after a parameter write), and array helpers.
#pragma once
#include <adjoint/adjoint.h>
#include <adjoint/app/renderer.h>
#include <adjoint/app/scene.h>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>   // in every file of the module: the casters must agree across them

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <string>

namespace adjoint::python {

namespace py = pybind11;

// The process's Vulkan context and device, made on first use (ADJOINT_DEVICE / ADJOINT_VALIDATION apply) and
// released at interpreter exit, before the Vulkan loader's own teardown.
struct Runtime {
    Context context;
    Device device;
    std::shared_ptr<void> raster_shaders;   // raster_ops.cpp's kernels, compiled on first use, freed before the device
    std::shared_ptr<void> interpolate_shaders;   // interpolate_ops.cpp's, likewise
    std::shared_ptr<void> raster_bin_shaders;   // raster_bins.cpp's, likewise
    std::shared_ptr<void> texture_shaders;  // texture_ops.cpp's, likewise
    std::shared_ptr<void> antialias_shaders;   // antialias_ops.cpp's, likewise
    // The stream the array ops record into (OpStream), kept from call to call so that its staging memory is
    // allocated (and its pages faulted in) once: a new stream a call spent most of a megapixel backward pass
    // on that. Declared after the device, so destroyed before it.
    std::optional<Stream> stream;
    Runtime();
};

// The runtime's stream for one op call. A call that throws drops the stream, so that nothing it recorded (reads
// of arrays the unwinding frees, writes into them) runs later; the next call makes a new one.
class OpStream {
public:
    explicit OpStream(Runtime& rt) : rt_(rt) {
        if (!rt_.stream) rt_.stream.emplace(rt_.device.create_stream());
    }
    ~OpStream() {
        if (std::uncaught_exceptions() > uncaught_) rt_.stream.reset();
    }
    OpStream(const OpStream&) = delete;
    OpStream& operator=(const OpStream&) = delete;
    Stream& operator*() const { return *rt_.stream; }

private:
    Runtime& rt_;
    int uncaught_ = std::uncaught_exceptions();
};
std::shared_ptr<Runtime> runtime();
void release_runtime();

struct PyScene {
    std::shared_ptr<Runtime> rt;
    app::Scene scene;
    std::unique_ptr<app::SceneRenderer> renderer;   // null after a write: the next render rebuilds it
    std::shared_ptr<void> torch_cache;   // adjoint.torch.render's optimizers (torch_bridge.cpp); dropped by a write
    // The scene as it is now, shared by adjoint.torch.render's forward calls with their backward: a write between
    // them must not change their gradients. Copied on the first render after a write; dropped by a write.
    std::shared_ptr<const app::Scene> shared;

    app::SceneRenderer& ensure_renderer();
    const std::shared_ptr<const app::Scene>& snapshot() {
        if (!shared) shared = std::make_shared<const app::Scene>(scene);
        return shared;
    }
    // A view argument: TypeError unless an integer index (not a bool), IndexError when out of range.
    uint32_t checked_view(const py::handle& view) const;
};

// Pixels a thread of rasterize's and interpolate's backward kernels takes (of a row, or of the images' pixels in
// order), summing their gradients per vertex in registers before adding them by float atomics (RunSums, channels.h).
constexpr uint32_t kGradRun = 8;

// The arrays the ops take: C-contiguous float32 and uint32 (numpy converts what it can).
using FArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using UArray = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;

// Array `a` must hold exactly `count` T: the ops' callers are this package's Python code, and a wrong shape must be a
// ValueError naming the array (`what`), not a read past its end.
template <typename T, typename A>
void expect_values(const A& a, size_t count, const char* what) {
    using V = typename A::value_type;
    if (size_t(a.size()) * sizeof(V) != count * sizeof(T))
        throw py::value_error(std::string(what) + ": expected " + std::to_string(count * sizeof(T) / sizeof(V)) +
                              " values, got " + std::to_string(a.size()));
}
// `count` T for array `what` on the device: a ValueError naming it where they would pass what one kernel argument may
// cover (Device::max_buffer_bytes, 128 MiB on lavapipe). The engine refuses that too, but names a kernel's argument
// by number, or the Vulkan call that failed, which a caller of the op cannot act on.
template <typename T>
void expect_fits(const Runtime& rt, size_t count, const char* what) {
    const uint64_t bytes = uint64_t(count) * sizeof(T), limit = rt.device.max_buffer_bytes();
    if (bytes > limit)
        throw py::value_error(std::string(what) + ": " + std::to_string(bytes) + " bytes on the device, more than the " +
                              std::to_string(limit) + " one buffer of " + rt.device.name() +
                              " holds; take a smaller resolution or batch, or fewer channels, at a time");
}
// A new device buffer of exactly `count` T for array `what` (expect_fits): a buffer copied out whole into an array
// of `count` must not be longer. A kernel argument cannot be empty: pass std::max(count, 1) for one.
template <typename T>
Buffer<T> device_buffer(Runtime& rt, size_t count, const char* what) {
    expect_fits<T>(rt, count, what);
    return rt.device.create_buffer<T>(count);
}
// Copies the first values of `b` into array `a`, as many as `a` holds (none for an empty array): a buffer may be
// longer than its array, as a kernel argument holds at least one element where an array may be empty.
template <typename T, typename A>
void copy_out(Stream& stream, const Buffer<T>& b, A& a) {
    const size_t count = size_t(a.size()) * sizeof(typename A::value_type) / sizeof(T);
    if (count) stream << b.copy_to(a.mutable_data(), 0, count);
}
// A new device buffer of `count` T (at least 1) filled from array `a` (checked by expect_values).
template <typename T, typename A>
Buffer<T> upload(Runtime& rt, Stream& stream, const A& a, size_t count, const char* what) {
    expect_values<T>(a, count, what);
    Buffer<T> b = device_buffer<T>(rt, std::max<size_t>(count, 1), what);
    if (count) stream << b.copy_from(a.data());
    return b;
}
// The same as a differentiable buffer, its gradient zeroed.
template <typename T, typename A>
DiffBuffer<T> upload_diff(Runtime& rt, Stream& stream, const A& a, size_t count, const char* what) {
    expect_values<T>(a, count, what);
    expect_fits<T>(rt, count, what);
    DiffBuffer<T> b = rt.device.create_diff_buffer<T>(std::max<size_t>(count, 1));
    if (count) stream << b.value.copy_from(a.data());
    stream << b.zero_grad();
    return b;
}

// The parameter a path addresses (KeyError with the loader's reason when none).
app::Parameter find_parameter_or_throw(const app::Scene& scene, const std::string& path);
// A value as numpy: a texture [H, W, 3], anything else 1-D.
py::array_t<float> value_to_array(const app::Parameter& p, const std::vector<float>& value);
// An array-like (or a number) as the parameter's floats; ValueError naming the path and the shape expected.
std::vector<float> array_to_value(const app::Parameter& p, const py::handle& value);
// A linear RGBA image as float32 [H, W, 3], rows top first.
py::array_t<float> image_to_array(const app::LinearImage& image);

void bind_scene(py::module_& m);
void bind_torch_bridge(py::module_& m);
void bind_raster_ops(py::module_& m);   // raster_ops.cpp: nvdiffrast's rasterize
void bind_interpolate_ops(py::module_& m);   // interpolate_ops.cpp: interpolate and its image-space derivatives
void bind_texture_ops(py::module_& m);  // texture_ops.cpp: nvdiffrast's texture and its mip chain
void bind_antialias_ops(py::module_& m);   // antialias_ops.cpp: nvdiffrast's antialias

} // namespace adjoint::python
