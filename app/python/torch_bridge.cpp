// What adjoint.torch.render needs from C++: a view rendered with some parameters set to given values (the scene
// itself unchanged), and the vector-Jacobian product d image / d parameters applied to an image gradient.
//
// The product comes from the optimizer's own gradient, the engine's $autodiff of the renderer and the loss,
// through the public Optimizer: with the l2 loss, loss = scale · Σ |I − T|² over the view's pixels and RGB
// (scale = 1 / (pixels · 3)), so d loss / d I = 2 · scale · (I − T). A target T = I − G / (2 · scale) makes
// d loss / d I equal G, the caller's image gradient, and Optimizer::evaluate's d loss / d params is then
// Σ G · d I / d params: the product, with no derivative written here.
#include "runtime.h"

#include <adjoint/app/optimization.h>

#include <pybind11/stl.h>

#include <algorithm>
#include <list>
#include <memory>
#include <optional>

namespace adjoint::python {

namespace {

struct Assignment {
    std::vector<app::Parameter> parameters;
    std::vector<std::vector<float>> values;
};

Assignment assign(app::Scene& scene, const std::vector<std::string>& paths, const py::list& values) {
    if (paths.size() != values.size()) throw py::value_error("as many values as paths are needed");
    Assignment a;
    for (size_t i = 0; i < paths.size(); ++i) {
        app::Parameter p = find_parameter_or_throw(scene, paths[i]);
        for (const auto& q : a.parameters)
            if (q.path == p.path) throw py::value_error(p.path + ": given twice");
        // In the scene file's units, as scene.parameters (intrinsics: pixels at the file's camera.resolution).
        a.values.push_back(app::value_in_run_units(scene, p.kind, array_to_value(p, values[i])));
        app::set_parameter_value(scene, p, a.values.back());
        a.parameters.push_back(p);
    }
    // As scene.parameters checks a value (the format's range, finite numbers, a camera not at its target), once all
    // are set (an eye and a target moved together): an optimizer that drifts there gets the error, not a blank image
    // and a zero gradient.
    for (size_t i = 0; i < a.parameters.size(); ++i)
        if (const std::string why = app::parameter_value_problem(scene, a.parameters[i], a.values[i]); !why.empty())
            throw py::value_error(a.parameters[i].path + ": " + why);
    return a;
}

// The image as a float4 target (alpha 1); shape-checked against the view.
app::LinearImage target_from(const app::Camera& camera, const py::handle& image, const py::handle& grad, float k) {
    using Array = py::array_t<float, py::array::c_style | py::array::forcecast>;
    Array i = Array::ensure(image), g = Array::ensure(grad);
    const uint32_t w = camera.width, h = camera.height;
    for (const Array* a : {&i, &g})
        if (!*a || a->ndim() != 3 || a->shape(0) != h || a->shape(1) != w || a->shape(2) != 3)
            throw py::value_error("the image and its gradient must be float [" + std::to_string(h) + ", " +
                                  std::to_string(w) + ", 3]");
    app::LinearImage t;
    t.width = w;
    t.height = h;
    t.texels.resize(size_t(w) * h);
    const float *pi = i.data(), *pg = g.data();
    for (size_t p = 0; p < t.texels.size(); ++p)
        t.texels[p] = float4{pi[p * 3] - k * pg[p * 3], pi[p * 3 + 1] - k * pg[p * 3 + 1],
                             pi[p * 3 + 2] - k * pg[p * 3 + 2], 1.0f};
    return t;
}

// One optimizer for a scene, a set of paths and a view: built once (the scene's upload, its pipelines, the static
// chain's rasterization: most of a call's time when each call built its own), then a call writes the values and,
// for a gradient, the target. Its scene is the one view, its target the image whose gradient is asked
// (bind_torch_bridge).
struct TorchCache {
    std::vector<std::string> paths;
    uint32_t view = 0;
    app::Scene scratch;                      // the values go through it, so that they are the scene's floats
    std::vector<app::Parameter> parameters;
    std::unique_ptr<app::Optimizer> optimizer;
    size_t bytes = 0;                        // the device buffers its construction took
};

// The PyScene's optimizers, the most recently used first (PyScene::torch_cache; a write to the scene drops them):
// a loop over views keeps one each. Each holds the scene's upload and its view's buffers (and a host copy of the
// scene of about that size), so they are weighed by their buffers: kept while those take at most 256 MiB, and at
// most 64 of them. Eight views of a 128x128 textured scene all stay (a call 15 -> 5 ms when four were kept); a
// scene with large textures keeps fewer. The most recent one is always kept.
struct TorchCacheLimits {
    size_t count = 64;
    size_t bytes = size_t(256) << 20;
};
TorchCacheLimits torch_cache_limits;   // the tests lower them (adjoint._torch_cache_limits)
using TorchCaches = std::list<TorchCache>;

// Drops the least recently used optimizers until `adding` more bytes and one more optimizer fit.
void make_room(TorchCaches& caches, size_t adding) {
    size_t total = adding;
    for (const TorchCache& c : caches) total += c.bytes;
    while (!caches.empty() &&
           (caches.size() + 1 > torch_cache_limits.count || total > torch_cache_limits.bytes)) {
        total -= caches.back().bytes;
        caches.pop_back();
    }
}

// An optimizer for `base`'s view `view` with `paths` free.
TorchCache make_cache(Device& device, const app::Scene& base, const std::vector<std::string>& paths,
                      const py::list& values, uint32_t view) {
    TorchCache made;
    made.paths = paths;
    made.view = view;
    made.scratch = base;
    Assignment a = assign(made.scratch, paths, values);
    app::Scene scene = base;
    scene.camera = scene.views[view];
    scene.views = {scene.views[view]};
    scene.view_images.clear();
    app::Optimization opt;
    opt.target_is_scene = false;
    app::LinearImage blank;
    blank.width = scene.camera.width;
    blank.height = scene.camera.height;
    blank.texels.assign(size_t(blank.width) * blank.height, float4{0, 0, 0, 1});
    opt.target_images = {std::move(blank)};
    opt.iterations = 1;
    for (size_t i = 0; i < a.parameters.size(); ++i) {
        a.parameters[i].init = a.values[i];
        opt.parameters.push_back(a.parameters[i]);
    }
    scene.optimize = std::move(opt);
    app::check_scene_fits(device, scene);
    made.parameters = std::move(a.parameters);
    const size_t before = device.buffer_bytes_in_use();
    made.optimizer = std::make_unique<app::Optimizer>(device, scene);
    const size_t after = device.buffer_bytes_in_use();
    made.bytes = after > before ? after - before : 0;
    return made;
}

// The cache's free values set to `values` (through its scratch scene, so that they are the scene's floats).
TorchCache& with_values(TorchCache& cache) {
    std::vector<float> floats;
    for (const auto& p : cache.parameters) {
        const std::vector<float> v = app::parameter_value(cache.scratch, p);
        floats.insert(floats.end(), v.begin(), v.end());
    }
    cache.optimizer->set_free_values(floats);
    return cache;
}

TorchCache& torch_cache(PyScene& s, const std::vector<std::string>& paths, const py::list& values, uint32_t view) {
    if (!s.torch_cache) s.torch_cache = std::make_shared<TorchCaches>();
    auto& caches = *static_cast<TorchCaches*>(s.torch_cache.get());
    auto found = std::find_if(caches.begin(), caches.end(),
                              [&](const TorchCache& c) { return c.paths == paths && c.view == view; });
    if (found != caches.end()) {
        caches.splice(caches.begin(), caches, found);
        assign(caches.front().scratch, paths, values);
    } else {
        TorchCache made = make_cache(s.rt->device, s.scene, paths, values, view);
        make_room(caches, made.bytes);
        caches.push_front(std::move(made));
    }
    return with_values(caches.front());
}

// The scene as a render's forward call saw it (PyScene::snapshot), kept by its autograd node for the backward.
struct SceneSnapshot {
    std::shared_ptr<const app::Scene> scene;
};

} // namespace

void bind_torch_bridge(py::module_& m) {
    m.def("_render_with", [](PyScene& s, const std::vector<std::string>& paths, const py::list& values,
                             const py::handle& view) {
        const uint32_t v = s.checked_view(view);
        if (paths.empty()) return image_to_array(s.ensure_renderer().render(v));
        return image_to_array(torch_cache(s, paths, values, v).optimizer->render_current(0));
    }, py::arg("scene"), py::arg("paths"), py::arg("values"), py::arg("view"));

    py::class_<SceneSnapshot>(m, "_SceneSnapshot", "The scene as a render's forward call saw it");
    m.def("_snapshot", [](PyScene& s) { return SceneSnapshot{s.snapshot()}; }, py::arg("scene"));

    m.def("_image_vjp", [](PyScene& s, const SceneSnapshot& seen, const std::vector<std::string>& paths,
                           const py::list& values, const py::handle& view, const py::handle& image,
                           const py::handle& grad) {
        const uint32_t v = s.checked_view(view);
        py::list out;
        if (paths.empty()) return out;
        // Written to since the forward call (a loop that sets each view's camera, then one backward over all):
        // differentiated as the forward call saw it, with an optimizer made for this once.
        std::optional<TorchCache> past;
        if (seen.scene != s.shared) past.emplace(make_cache(s.rt->device, *seen.scene, paths, values, v));
        TorchCache& cache = past ? with_values(*past) : torch_cache(s, paths, values, v);
        // The target that makes d loss / d image the caller's gradient (above).
        const app::Camera& camera = seen.scene->views[v];
        const float scale = 1.0f / (float(camera.width) * float(camera.height) * 3.0f);
        cache.optimizer->set_target(0, target_from(camera, image, grad, 1.0f / (2.0f * scale)));
        std::vector<float> gradient;
        cache.optimizer->evaluate(&gradient);
        size_t at = 0;
        for (const auto& p : cache.parameters) {
            // d/d file value = d/d run value * (run pixels per file pixel): value_in_run_units scales alike.
            out.append(value_to_array(p, app::value_in_run_units(*seen.scene, p.kind,
                                                                 std::vector<float>(gradient.begin() + at,
                                                                                    gradient.begin() + at + p.size))));
            at += p.size;
        }
        return out;
    }, py::arg("scene"), py::arg("seen"), py::arg("paths"), py::arg("values"), py::arg("view"), py::arg("image"),
       py::arg("grad"),
       "Σ grad · d image / d value for each path, from the optimizer's $autodiff gradient");

    // For the tests: the optimizers kept, most recent first, as (view, bytes); and the limits (count, bytes), set
    // where given, returning the previous ones.
    m.def("_torch_cache_info", [](PyScene& s) {
        py::list out;
        if (s.torch_cache)
            for (const TorchCache& c : *static_cast<TorchCaches*>(s.torch_cache.get()))
                out.append(py::make_tuple(c.view, c.bytes));
        return out;
    }, py::arg("scene"));
    m.def("_torch_cache_limits", [](std::optional<size_t> count, std::optional<size_t> bytes) {
        py::tuple before = py::make_tuple(torch_cache_limits.count, torch_cache_limits.bytes);
        if (count) torch_cache_limits.count = std::max<size_t>(*count, 1);
        if (bytes) torch_cache_limits.bytes = *bytes;
        return before;
    }, py::arg("count") = py::none(), py::arg("bytes") = py::none());
}

} // namespace adjoint::python
