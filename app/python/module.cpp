// The compiled module adjoint._adjoint: the shared device, the engine's errors as Python exceptions, and the
// bindings of scene_bindings.cpp and torch_bridge.cpp.
#include "runtime.h"

#include <adjoint/app/optimization.h>

namespace adjoint::python {

namespace {
std::shared_ptr<Runtime>& runtime_slot() {
    static std::shared_ptr<Runtime> slot;
    return slot;
}
} // namespace

Runtime::Runtime() : context(), device(context.create_device()) {}

std::shared_ptr<Runtime> runtime() {
    auto& slot = runtime_slot();
    if (!slot) slot = std::make_shared<Runtime>();
    return slot;
}

// Objects still alive keep their own reference; this only drops the module's.
void release_runtime() { runtime_slot().reset(); }

} // namespace adjoint::python

PYBIND11_MODULE(_adjoint, m) {
    namespace py = pybind11;
    using namespace adjoint::python;
    m.doc() = "Adjoint's renderer and optimizer (the public C++ API of Adjoint::renderer)";

    // Bad input (a scene, a value) is the caller's: ValueError with the loader's `<file>: <json path>: <what>`.
    // A loss that turns non-finite is arithmetic; anything else the engine reports is a RuntimeError.
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const adjoint::app::SceneError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const adjoint::app::NonFiniteError& e) {
            PyErr_SetString(PyExc_FloatingPointError, e.what());
        } catch (const adjoint::Error& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        }
    });

    m.def("validation_messages", [] {
        auto rt = runtime();
        return rt->device.validation_messages();
    }, "The Vulkan validation layer's messages so far (ADJOINT_VALIDATION=1), for tests");
    m.def("device_name", [] { return runtime()->device.name(); });
    // Per-kernel device time (the engine's timestamps around each dispatch), as adjoint-optimize --profile has it.
    m.def("_set_kernel_profiling", [](bool on) { adjoint::set_kernel_profiling(runtime()->device, on); });
    m.def("_kernel_times", [] {
        auto rt = runtime();
        py::list out;
        for (const adjoint::KernelTime& t : adjoint::kernel_times(rt->device))
            out.append(py::make_tuple(t.kernel, t.dispatches, t.ms));
        adjoint::clear_kernel_times(rt->device);
        return out;
    });
    m.def("_release", &release_runtime);
    // For tests: whether the array ops' kept stream exists (a call that throws drops it).
    m.def("_op_stream_alive", [] { return runtime()->stream.has_value(); });
    bind_scene(m);
    bind_torch_bridge(m);
    bind_raster_ops(m);
    bind_interpolate_ops(m);
    bind_texture_ops(m);
    bind_antialias_ops(m);
}
