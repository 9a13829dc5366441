// The optimization loop. One iteration is one submission:
//   the objective (optim/objective.h: mip chains -> per view render + loss + backward, the reads of the
//   differentiable parameter buffer and of the textures scattering their adjoints -> mip gradients into the
//   parameter buffer -> partial sums of the loss) -> per-parameter sums of error and gradient norms and the
//   optimizer plug-in's step over the free parameters (one dispatch) -> read back a few hundred floats.
#include <adjoint/app/optimization.h>
#include <adjoint/app/renderer.h>

#include "free_parameters.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

namespace adjoint::app {

NonFiniteError::NonFiniteError(uint32_t it, std::string p)
    : Error("the loss turned non-finite at iteration " + std::to_string(it) + "; the first parameter with a " +
            "non-finite gradient is " + (p.empty() ? std::string("(none: the loss itself)") : p)),
      iteration(it), parameter(std::move(p)) {}

namespace {

bool is_camera(ParameterKind k) { return kind_info(k).collection == ParameterCollection::camera; }

} // namespace

OptimizerStages::OptimizerStages(Device& d, const Scene& scene, bool dynamic)
    : device(d), stream(d.create_stream()), truth(scene), opt(*truth.optimize), current(prepare_current(scene)),
      data(upload_scene(d, stream, current)),
      optimizer(optimizer_model(opt.optimizer)), kernels(d, optimizer), rng(opt.seed) {
    has_truth = opt.target_is_scene;

    // Free parameters: where they live, their rates, bounds and truth (a texture's resampled to its size), their
    // chunks for the sums.
    std::vector<float> values = gather_values(current, data.layout);
    FreeParameterTables tables = free_parameter_tables(opt, current, has_truth ? &truth : nullptr, data.layout, values);
    free = std::move(tables.free);
    const std::vector<ErrorChunk>& h_chunks = tables.chunks;
    chunk_count = uint32_t(h_chunks.size());

    // The arrays the step reads as float4s too (optim/kernels.cpp) hold a whole number of them, as the layout
    // does (ParamLayout; at least one float4 for a layout of none).
    floats = values.size();
    const size_t n = whole_float4s(std::max<uint32_t>(uint32_t(floats), 1));
    values.resize(n, 0.0f);
    tables.truth.resize(n, 0.0f);
    params = d.create_diff_buffer<float>(n);
    stream << params.value.copy_from(values.data());
    for (size_t i = 0; i < 2; ++i) {
        state.push_back(d.create_buffer<float>(i < optimizer.state.size() ? n : 4));
        stream << state.back().fill_zero();
    }
    const std::vector<float4> h_rates = parameter_rates(free);
    rates = d.create_buffer<float4>(std::max<size_t>(h_rates.size(), 1));
    if (!h_rates.empty()) stream << rates.copy_from(h_rates.data());
    truth_values = d.create_buffer<float>(n);
    stream << truth_values.copy_from(tables.truth.data());
    truth_host = std::move(tables.truth);
    chunks = d.create_buffer<ErrorChunk>(std::max<size_t>(h_chunks.size(), 1));
    if (!h_chunks.empty()) stream << chunks.copy_from(h_chunks.data());
    chunk_sums = d.create_buffer<float4>(std::max<size_t>(h_chunks.size(), 1));
    for (size_t i = 0; i < free.size(); ++i)
        if (error_measured_on_host(kind_info(free[i].p.kind).metric)) host_error_params.push_back(i);
    host_error_values.resize(4 * host_error_params.size());

    for (const auto& f : free) camera_free = camera_free || is_camera(f.p.kind);
    objective.emplace(d, stream, truth, current, data, camera_free, dynamic);
    stream << synchronize();
}

Optimizer::Optimizer(Device& device, const Scene& scene, bool diagnosable) {
    if (!scene.optimize) throw SceneError(scene.display_name, "optimize", "the scene has no optimize block");
    check_views_fit(device, scene);
    s_ = std::make_unique<OptimizerStages>(device, scene, diagnosable);
}

Optimizer::~Optimizer() = default;

uint32_t Optimizer::iteration() const { return s_->iteration; }
uint32_t Optimizer::total_iterations() const { return s_->opt.iterations; }
uint32_t Optimizer::view_count() const { return uint32_t(s_->data.views.size()); }
bool Optimizer::has_truth() const { return s_->has_truth; }

IterationReport Optimizer::step() {
    auto& s = *s_;
    auto t0 = std::chrono::steady_clock::now();
    const uint32_t nviews = uint32_t(s.data.views.size()), k = std::min(s.opt.views_per_iteration, nviews);
    // Views for this step: a seeded partial shuffle (all views, in order, when k == n).
    std::vector<uint32_t> order(nviews);
    for (uint32_t i = 0; i < nviews; ++i) order[i] = i;
    if (k < nviews)
        for (uint32_t i = 0; i < k; ++i) std::swap(order[i], order[i + s.rng.below(nviews - i)]);
    order.resize(k);

    const float scale = 1.0f / (float(s.objective->pixels()) * 3.0f * float(k));
    s.objective->record(s.params, order, scale);
    // Learning rates decay per iteration; Adam's bias correction counts from 1. The sums and the step in one
    // dispatch over the free parameters' chunks (optim/kernels.h).
    const float lr_scale = std::pow(s.opt.lr_decay, float(s.iteration));
    const std::array<float, 4>& settings = s.opt.optimizer_settings;
    const std::array<float, 4> per = s.optimizer.host_constants(settings, s.iteration);
    // The values the host measures errors of (rotations, directions), read before the step moves them: the
    // step's sums measure the others at the values this iteration rendered, and the row holds one iteration.
    for (size_t i = 0; i < s.host_error_params.size(); ++i)
        s.stream << s.params.value.copy_to(&s.host_error_values[4 * i], s.free[s.host_error_params[i]].offset,
                                           std::min<size_t>(s.free[s.host_error_params[i]].p.size, 4));
    if (s.chunk_count > 0)
        s.stream << s.kernels.step(s.chunks, s.params.value, s.params.grad, s.state[0], s.state[1], s.truth_values,
                                   s.params.value.as<float4>(), s.params.grad.as<float4>(), s.state[0].as<float4>(),
                                   s.state[1].as<float4>(), s.truth_values.as<float4>(), s.rates, s.chunk_sums,
                                   lr_scale,
                                   float4(settings[0], settings[1], settings[2], settings[3]),
                                   float4(per[0], per[1], per[2], per[3]))
                        .dispatch(s.chunk_count * s.kernels.lanes);
    s.objective->read_back();
    s.last_chunk_sums.resize(s.chunk_sums.size());
    s.stream << s.chunk_sums.copy_to(s.last_chunk_sums.data());
    s.stream << synchronize();

    IterationReport r;
    r.iteration = s.iteration;
    auto [loss, psnr] = s.objective->loss_and_psnr(k, scale);
    r.loss = loss;
    r.image_psnr = psnr;
    // Non-finite: name the first parameter (in file order) whose gradient has a non-finite element.
    std::string bad;
    for (const auto& f : s.free)
        for (uint32_t c = 0; c < f.chunks && bad.empty(); ++c)
            if (s.last_chunk_sums[f.first_chunk + c].w > 0) bad = f.p.path;
    if (!std::isfinite(r.loss) || !bad.empty()) throw NonFiniteError(s.iteration, bad);
    if (s.has_truth) r.param_error = worst_parameter_error(s);
    r.errors = parameter_errors_in_units(s);
    ++s.iteration;
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

LinearImage Optimizer::render_current(uint32_t view) {
    auto& s = *s_;
    const auto& v = s.data.views.at(view);
    auto image = s.device.create_buffer<float4>(s.objective->pixels());
    LinearImage out;
    out.width = v.width;
    out.height = v.height;
    out.texels.resize(s.objective->pixels());
    s.objective->render(s.params.value, view, image);
    s.stream << image.copy_to(out.texels.data()) << synchronize();
    return out;
}

LinearImage Optimizer::target(uint32_t view) const { return s_->objective->target(view); }

std::vector<ParameterState> Optimizer::parameters() {
    auto& s = *s_;
    std::vector<float> values(s.params.value.size());
    s.stream << s.params.value.copy_to(values.data()) << synchronize();
    std::vector<ParameterState> out;
    for (const auto& f : s.free) {
        ParameterState p;
        p.path = f.p.path;
        p.kind = f.p.kind;
        p.lr = f.p.lr;
        p.texture_width = f.p.texture_width;
        p.texture_height = f.p.texture_height;
        const ParameterKindInfo& kind = kind_info(f.p.kind);
        p.value.assign(values.begin() + f.offset, values.begin() + f.offset + f.p.size);
        if (kind.perturbation == Perturbation::rotation) {   // stored raw; the kernels use the unit quaternion
            double n = 0;
            for (float c : p.value) n += double(c) * c;
            if (n > 0)
                for (float& c : p.value) c = float(c / std::sqrt(n));
        }
        if (f.has_truth) {
            const auto first = s.truth_host.begin() + f.offset;
            p.true_value = std::vector<float>(first, first + std::ptrdiff_t(f.p.size));
            p.error = parameter_error(kind, p.value.data(), p.true_value->data(), f.p.size);
        }
        double g2 = 0;
        for (uint32_t c = 0; c < f.chunks && f.first_chunk + c < s.last_chunk_sums.size(); ++c)
            g2 += s.last_chunk_sums[f.first_chunk + c].z;
        p.grad_norm = std::sqrt(g2);
        out.push_back(std::move(p));
    }
    return out;
}

Scene Optimizer::current_scene() {
    Scene scene = s_->current;
    auto params = parameters();
    for (size_t i = 0; i < params.size(); ++i) set_parameter_value(scene, s_->free[i].p, params[i].value);
    return scene;
}

OptimizerState Optimizer::save_state() {
    auto& s = *s_;
    OptimizerState st;
    st.iteration = s.iteration;
    st.rng = s.rng.s;
    const size_t n = s.floats;
    st.params.resize(n);
    s.stream << s.params.value.copy_to(st.params.data(), 0, n);
    st.arrays.reserve(s.optimizer.state.size());   // no reallocation: copy_to writes at the next synchronize
    for (size_t i = 0; i < s.optimizer.state.size(); ++i) {
        st.arrays.emplace_back(std::string(s.optimizer.state[i]), std::vector<float>(n));
        s.stream << s.state[i].copy_to(st.arrays.back().second.data(), 0, n);
    }
    s.stream << synchronize();
    // The slots' floats, without the layout's alignment (ParamLayout::pack).
    st.params = s.data.layout.pack(st.params);
    for (auto& [name, data] : st.arrays) data = s.data.layout.pack(data);
    return st;
}

void Optimizer::load_state(const OptimizerState& st) {
    auto& s = *s_;
    const size_t n = s.floats, packed = s.data.layout.packed_size();
    if (st.params.size() != packed)
        throw Error("the checkpoint holds " + std::to_string(st.params.size()) + " parameter floats, this scene " +
                    std::to_string(packed));
    std::vector<const std::vector<float>*> arrays;
    for (std::string_view name : s.optimizer.state) {
        const std::vector<float>* found = nullptr;
        for (const auto& [array_name, data] : st.arrays)
            if (array_name == name) found = &data;
        if (!found)
            throw Error("the checkpoint has no " + std::string(name) + " array (the " + std::string(s.optimizer.name) +
                        " optimizer's state)");
        if (found->size() != packed)
            throw Error("the checkpoint's " + std::string(name) + " holds " + std::to_string(found->size()) +
                        " floats, this scene " + std::to_string(packed));
        arrays.push_back(found);
    }
    s.iteration = st.iteration;
    s.rng.s = st.rng;
    const std::vector<float> params = s.data.layout.unpack(st.params);
    std::vector<std::vector<float>> state;
    for (const std::vector<float>* a : arrays) state.push_back(s.data.layout.unpack(*a));
    s.stream << s.params.value.copy_from(params.data(), 0, n);
    for (size_t i = 0; i < state.size(); ++i) s.stream << s.state[i].copy_from(state[i].data(), 0, n);
    s.stream << synchronize();
}

namespace {

// The free parameters' floats of a whole parameter buffer's gradient, in file order.
std::vector<float> free_part(const OptimizerStages& s, const std::vector<float>& g) {
    std::vector<float> out;
    for (const auto& f : s.free) out.insert(out.end(), g.begin() + f.offset, g.begin() + f.offset + f.p.size);
    return out;
}

// evaluate()'s scale: the loss is the mean over every view's pixels and channels.
float loss_scale(const OptimizerStages& s) {
    return 1.0f / (float(s.objective->pixels()) * 3.0f * float(s.data.views.size()));
}

} // namespace

double Optimizer::evaluate(std::vector<float>* gradient, std::vector<double>* view_losses) {
    auto& s = *s_;
    const uint32_t n = uint32_t(s.data.views.size());
    std::vector<uint32_t> all(n);
    for (uint32_t i = 0; i < n; ++i) all[i] = i;
    const float scale = loss_scale(s);
    s.objective->record(s.params, all, scale);
    std::vector<float> g(s.params.grad.size());
    s.objective->read_back();
    s.stream << s.params.grad.copy_to(g.data()) << synchronize();
    if (gradient) *gradient = free_part(s, g);
    if (view_losses) *view_losses = s.objective->view_losses(n, scale);
    return s.objective->loss_and_psnr(n, scale).first;
}

std::vector<float> Optimizer::view_gradient(uint32_t view) {
    auto& s = *s_;
    if (view >= s.data.views.size())
        throw Error("view_gradient: no view " + std::to_string(view) + " (the scene has " +
                    std::to_string(s.data.views.size()) + ")");
    s.objective->record(s.params, {view}, loss_scale(s), false);
    std::vector<float> g(s.params.grad.size());
    s.stream << s.params.grad.copy_to(g.data()) << synchronize();
    return free_part(s, g);
}

std::vector<float> Optimizer::free_values() {
    auto& s = *s_;
    std::vector<float> all(s.params.value.size()), out;
    s.stream << s.params.value.copy_to(all.data()) << synchronize();
    for (const auto& f : s.free) out.insert(out.end(), all.begin() + f.offset, all.begin() + f.offset + f.p.size);
    return out;
}

void Optimizer::set_free_values(const std::vector<float>& v) {
    auto& s = *s_;
    size_t total = 0;
    for (const auto& f : s.free) total += f.p.size;
    if (v.size() != total)
        throw Error("set_free_values: " + std::to_string(v.size()) + " floats are too " +
                    (v.size() < total ? "few" : "many") + " (the free parameters have " + std::to_string(total) + ")");
    // Each parameter's range alone (copy_from reads v now): nothing read back.
    size_t at = 0;
    for (const auto& f : s.free) {
        if (f.p.size) s.stream << s.params.value.copy_from(v.data() + at, f.offset, f.p.size);
        at += f.p.size;
    }
    s.stream << synchronize();
}

void Optimizer::set_target(uint32_t view, const LinearImage& image) {
    s_->objective->set_target(view, image);
    s_->stream << synchronize();
}

} // namespace adjoint::app
