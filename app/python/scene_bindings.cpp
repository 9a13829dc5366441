// adjoint.Scene (load, render a view, read and write parameters by path) and adjoint.Optimization (the
// optimizer loop), over the public API: load_scene, SceneRenderer, find_parameter / set_parameter_value,
// Optimizer.
#include "runtime.h"

#include <adjoint/app/optimization.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/plugins.h>

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <cstring>

namespace adjoint::python {

app::SceneRenderer& PyScene::ensure_renderer() {
    if (!renderer) {
        app::check_scene_fits(rt->device, scene);
        renderer = std::make_unique<app::SceneRenderer>(rt->device, scene);
    }
    return *renderer;
}

// A view argument: an integer index (pybind's int takes a bool, and True rendered view 1).
int view_index(const py::handle& v) {
    if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
        throw py::type_error("view: expected an integer index, got " +
                             std::string(py::str(v.get_type().attr("__name__"))) + " " + std::string(py::repr(v)));
    const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
    if (!index) throw py::error_already_set();   // its __index__ raised (a numpy array of several values)
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow || i < INT32_MIN || i > INT32_MAX)   // (2**40 failed as "Unable to cast")
        throw py::index_error("view " + std::string(py::str(index)) + " is out of range");
    return int(i);
}

uint32_t PyScene::checked_view(const py::handle& index) const {
    const int view = view_index(index);
    if (view < 0 || size_t(view) >= scene.views.size())
        throw py::index_error("view " + std::to_string(view) + " is out of range: the scene has " +
                              std::to_string(scene.views.size()) + " view(s)");
    return uint32_t(view);
}

app::Parameter find_parameter_or_throw(const app::Scene& scene, const std::string& path) {
    std::string why;
    auto p = app::find_parameter(scene, path, &why);
    if (!p) throw py::key_error(why.empty() ? "unknown parameter " + path : why);
    return *p;
}

py::array_t<float> value_to_array(const app::Parameter& p, const std::vector<float>& value) {
    const app::ParameterKindInfo& info = app::kind_info(p.kind);
    py::array_t<float> out = info.storage == app::ParameterStorage::texture && p.texture_width && p.texture_height
                                 ? py::array_t<float>(std::vector<py::ssize_t>{p.texture_height, p.texture_width, 3})
                                 : py::array_t<float>(py::ssize_t(value.size()));
    if (size_t(out.size()) != value.size()) out = py::array_t<float>(py::ssize_t(value.size()));
    std::memcpy(out.mutable_data(), value.data(), value.size() * sizeof(float));
    return out;
}

std::vector<float> array_to_value(const app::Parameter& p, const py::handle& value) {
    py::array_t<float, py::array::c_style | py::array::forcecast> a;
    try {
        a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
    } catch (const py::error_already_set&) {
    }
    if (!a) throw py::value_error(p.path + ": expected numbers, got " + std::string(py::str(py::type::of(value))));
    if (size_t(a.size()) != p.size)
        throw py::value_error(p.path + ": expected " + std::to_string(p.size) + " floats" +
                              (p.texture_width ? " (" + std::to_string(p.texture_height) + " x " +
                                                     std::to_string(p.texture_width) + " x 3)"
                                               : std::string()) +
                              ", got " + std::to_string(a.size()));
    // A texture given as an image must have its rows and columns: (W, H, 3) holds as many floats as (H, W, 3),
    // read as rows it would be the texture scrambled.
    const bool texture = app::kind_info(p.kind).storage == app::ParameterStorage::texture && p.texture_width;
    std::string shape;   // "2, 3", as a refusal below names it
    for (py::ssize_t i = 0; i < a.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape(i));
    if (texture && a.ndim() > 1 &&
        !(a.ndim() == 3 && size_t(a.shape(0)) == p.texture_height && size_t(a.shape(1)) == p.texture_width &&
          a.shape(2) == 3)) {
        throw py::value_error(p.path + ": expected an image of shape (" + std::to_string(p.texture_height) + ", " +
                              std::to_string(p.texture_width) + ", 3) or " + std::to_string(p.size) +
                              " floats, got shape (" + shape + ")");
    }
    // Other values of several dimensions: rows of 3 (vertices, coefficients, a colour as [[r, g, b]]) or a single
    // row or column. Vertices given as (3, N), x's then y's then z's, were taken as N rows and scrambled.
    if (!texture && a.ndim() > 1) {
        py::ssize_t longer = 0;
        for (py::ssize_t i = 0; i < a.ndim(); ++i) longer += a.shape(i) > 1;
        if (longer > 1 && a.shape(a.ndim() - 1) != 3) {
            throw py::value_error(p.path + ": expected " + std::to_string(p.size) + " floats" +
                                  (p.size % 3 == 0 ? " or " + std::to_string(p.size / 3) + " rows of 3" : "") +
                                  ", got shape (" + shape + ")");
        }
    }
    std::vector<float> v(a.data(), a.data() + a.size());
    if (const char* bad = app::kind_info(p.kind).invalid ? app::kind_info(p.kind).invalid(v) : nullptr)
        throw py::value_error(p.path + ": " + bad);
    return v;
}

py::array_t<float> image_to_array(const app::LinearImage& image) {
    py::array_t<float> out(std::vector<py::ssize_t>{image.height, image.width, 3});
    float* o = out.mutable_data();
    for (size_t i = 0; i < image.texels.size(); ++i)
        for (int c = 0; c < 3; ++c) o[i * 3 + c] = image.texels[i][c];
    return out;
}

namespace {

// Every path the scene has a value for, in the order of its materials, lights, meshes and camera.
std::vector<std::string> parameter_paths(const app::Scene& s) {
    std::vector<std::string> candidates, out;
    for (const auto& m : s.materials) {
        const app::MaterialModel& model = app::material_model(m.model);
        for (const auto& p : model.properties) candidates.push_back("materials." + m.name + "." + std::string(p.name));
        for (const auto& t : model.textures) candidates.push_back("materials." + m.name + "." + std::string(t.name));
    }
    auto add = [&](app::ParameterCollection c, const std::string& prefix) {
        for (const auto& k : app::parameter_kinds())
            if (k.collection == c) candidates.push_back(prefix + k.property);
    };
    for (const auto& l : s.lights) add(app::ParameterCollection::lights, "lights." + l.name + ".");
    for (const auto& m : s.meshes) add(app::ParameterCollection::meshes, "meshes." + m.name + ".");
    add(app::ParameterCollection::camera, "camera.");
    for (auto& c : candidates)
        if (app::find_parameter(s, c)) out.push_back(std::move(c));
    return out;
}

py::dict report_dict(const app::IterationReport& r) {
    py::dict d;
    d["iteration"] = r.iteration;
    d["loss"] = r.loss;
    d["psnr"] = r.image_psnr;
    d["param_error"] = r.param_error ? py::object(py::float_(*r.param_error)) : py::object(py::none());
    d["ms"] = r.ms;
    return d;
}

struct PyOptimization {
    std::shared_ptr<Runtime> rt;
    std::unique_ptr<app::Optimizer> optimizer;
};

} // namespace

void bind_scene(py::module_& m) {
    py::class_<PyScene>(m, "Scene", "A scene file loaded (meshes, textures, lights, camera, optimize block)")
        .def(py::init([](const std::filesystem::path& path, std::optional<std::pair<int64_t, int64_t>> resolution) {
                 app::LoadOptions o;
                 if (resolution) {   // signed, so that (-1, 4) is named as load_scene names (0, 4), not by pybind
                     const auto [w, h] = *resolution;
                     const int64_t most = app::max_resolution;
                     if (w < 1 || h < 1 || w > most || h > most)
                         throw py::value_error("resolution: expected each side in 1.." + std::to_string(most) +
                                               ", got (" + std::to_string(w) + ", " + std::to_string(h) + ")");
                     o.resolution = app::Resolution{uint32_t(w), uint32_t(h)};
                 }
                 PyScene s{runtime(), app::load_scene(path, o), nullptr, nullptr, nullptr};
                 return s;
             }),
             py::arg("path"), py::arg("resolution") = py::none(),
             "Loads a scene file; resolution=(width, height) replaces camera.resolution. ValueError names the "
             "file and JSON path of any problem")
        .def("render", [](PyScene& s, const py::handle& view) {
                 return image_to_array(s.ensure_renderer().render(s.checked_view(view)));
             },
             py::arg("view") = 0, "One view as float32 [H, W, 3] linear RGB, rows top first")
        .def_property_readonly("view_count", [](const PyScene& s) { return s.scene.views.size(); })
        .def_property_readonly("resolution", [](const PyScene& s) {
            return std::make_pair(s.scene.camera.width, s.scene.camera.height);
        })
        .def_property_readonly("name", [](const PyScene& s) { return s.scene.display_name; })
        .def("_parameter_paths", [](const PyScene& s) { return parameter_paths(s.scene); })
        .def("_get", [](const PyScene& s, const std::string& path) {
            app::Parameter p = find_parameter_or_throw(s.scene, path);
            // In the scene file's units, as params.json (intrinsics: pixels at the file's camera.resolution).
            return value_to_array(p, app::value_in_file_units(s.scene, p.kind, app::parameter_value(s.scene, p)));
        })
        .def("_set", [](PyScene& s, const std::string& path, const py::handle& value) {
            app::Parameter p = find_parameter_or_throw(s.scene, path);
            const std::vector<float> v = app::value_in_run_units(s.scene, p.kind, array_to_value(p, value));
            if (const std::string why = app::parameter_value_problem(s.scene, p, v); !why.empty())
                throw py::value_error(path + ": " + why);
            app::set_parameter_value(s.scene, p, v);
            s.renderer.reset();
            s.torch_cache.reset();
            s.shared.reset();
        });

    py::class_<PyOptimization>(m, "Optimization", "The scene's optimize block run step by step (adjoint-optimize's loop)")
        .def(py::init([](const PyScene& s) {
                 if (!s.scene.optimize)
                     throw py::value_error(s.scene.display_name + ": optimize: the scene has no optimize block");
                 return PyOptimization{s.rt, std::make_unique<app::Optimizer>(s.rt->device, s.scene)};
             }),
             py::arg("scene"))
        .def("step", [](PyOptimization& o) { return report_dict(o.optimizer->step()); },
             "One iteration: {'iteration', 'loss', 'psnr', 'param_error', 'ms'}")
        .def("run", [](PyOptimization& o, uint32_t iterations, std::optional<py::function> callback) {
                 py::object last = py::none();
                 for (uint32_t i = 0; i < iterations; ++i) {
                     last = report_dict(o.optimizer->step());
                     if (callback) (*callback)(last);
                     if (PyErr_CheckSignals() != 0) throw py::error_already_set();
                 }
                 return last;
             },
             py::arg("iterations"), py::arg("callback") = py::none(),
             "`iterations` steps, calling callback(report) after each; returns the last report (None for 0 steps)")
        .def_property_readonly("iteration", [](const PyOptimization& o) { return o.optimizer->iteration(); })
        .def_property_readonly("total_iterations", [](const PyOptimization& o) { return o.optimizer->total_iterations(); })
        .def("render", [](PyOptimization& o, const py::handle& index) {
                 const int view = view_index(index);
                 if (view < 0 || uint32_t(view) >= o.optimizer->view_count()) throw py::index_error("view out of range");
                 return image_to_array(o.optimizer->render_current(uint32_t(view)));
             }, py::arg("view") = 0, "A view with the current values, float32 [H, W, 3] linear RGB")
        .def("target", [](PyOptimization& o, const py::handle& index) {
                 const int view = view_index(index);
                 if (view < 0 || uint32_t(view) >= o.optimizer->view_count()) throw py::index_error("view out of range");
                 return image_to_array(o.optimizer->target(uint32_t(view)));
             }, py::arg("view") = 0)
        .def_property_readonly("parameters", [](PyOptimization& o) {
            py::dict d;
            app::Scene current = o.optimizer->current_scene();
            for (const auto& st : o.optimizer->parameters()) {
                app::Parameter p = find_parameter_or_throw(current, st.path);
                d[py::str(st.path)] = value_to_array(p, app::value_in_file_units(current, p.kind, st.value));
            }
            return d;
        }, "The free parameters' current values by path");
}

} // namespace adjoint::python
