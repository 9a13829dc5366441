// The static chain's texel gather (texel_gather.h): the taps kernel, the lists by texel, the gather kernel.
#include "optim/texel_gather.h"

#include <adjoint/core/error.h>

#include <algorithm>
#include <bit>

namespace adjoint::app {

namespace {

constexpr int kTaps = 8;             // a trilinear sample's texel reads (two levels of four)
constexpr uint32_t kRunRecords = 64;   // a texel's records a gather thread takes at most (loops stay short)

// Per covered entry e, each material sample's taps: texel read k (sample k / 8) at e * taps + k, its first float
// (kNoSlot where the read did not run) and its filter weight, d sample / d texel, the same for every channel:
// the gradient of the sum of the samples' channels.
auto taps_kernel(const ShadingPlan& plan, int samples, int& used) {
    return Kernel1D([plan, samples, &used](BufferUInt covered, BufferVar<gpu::SurfaceRecord> surfaces, BufferFloat4 tangents,
                                    BufferFloat params, TextureSetFloat3 textures, BufferVar<gpu::Material> materials,
                                    BufferVar<LightSlots> lights, Float3 eye, BufferUInt tap_at,
                                    BufferFloat tap_weight) noexcept {
        const int capacity = samples * kTaps;
        UInt e = dispatch_id().x;
        auto s = stored_surface(surfaces, tangents, covered.read(e), plan).load();
        $autodiff {
            HeldTexels<float3> held(capacity);
            Float3 total = make_float3(0.0f);
            ShadeInputs<BufferFloat> in{params, textures, materials, lights};
            in.held = &held;
            in.material_sample = [&](const Float3& c) -> Float3 {
                total = total + c;
                return c;
            };
            (void)shade_surface(in, plan, s, eye);
            used = held.used();
            adjoint::backward(dot(total, make_float3(1.0f)));
            for (int k = 0; k < used; ++k) {
                tap_at.write(e * uint32_t(used) + uint32_t(k), held.at(k));
                tap_weight.write(e * uint32_t(used) + uint32_t(k), grad(held.value(k)).x);
            }
        };
    });
}

// A thread a run of one texel's records: the sum of weight * d loss / d sample over it, added to the texel.
auto gather_kernel() {
    return Kernel1D([](BufferVar<uint4> runs, BufferVar<uint2> records, BufferFloat4 dsample,
                       BufferFloat texel_grad) noexcept {
        UInt4 r = runs.read(dispatch_id().x);
        Float3 sum = make_float3(0.0f);
        $for (i, r.y, r.z) {
            UInt2 rec = records.read(i);
            sum = sum + bit_cast<float>(rec.y) * dsample.read(rec.x).xyz();
        };
        // A texel of one run adds with plain stores; one whose list was split adds by float atomics.
        $if (r.w == 0u) {
            for (uint32_t c = 0; c < 3; ++c) texel_grad.write(r.x + c, texel_grad.read(r.x + c) + sum[c]);
        }
        $else {
            for (uint32_t c = 0; c < 3; ++c) texel_grad.atomic(r.x + c).fetch_add(sum[c]);
        };
    });
}

} // namespace

bool TexelGather::applies(const ShadingPlan& plan) {
    return plan.material_texture_gradients && !plan.light_texture_gradients && material_texture_samples(plan) > 0;
}

TexelGather::TexelGather(Device& device, const ShadingPlan& plan)
    : device_(device), taps_(device.compile(taps_kernel(plan, material_texture_samples(plan), used_),
                                            {.name = "texel_gather_taps"})),
      gather_(device.compile(gather_kernel(), {.name = "texel_gather"})), dsample_(device.create_buffer<float4>(1)) {
    // Sample k / 8's taps are reads k: each sample reads its 8 (trilinear) in turn.
    if (used_ % kTaps != 0) fail("texel gather: the shading read ", used_, " texels, not 8 a material sample");
    samples_ = uint32_t(used_ / kTaps);
}

void TexelGather::add_view(Stream& stream, const SceneData& data, uint32_t view, const SurfaceBuffers& surfaces,
                           const Buffer<uint32_t>& covered, uint32_t count, const Buffer<float>& params) {
    if (view != views_.size()) fail("TexelGather::add_view: view ", view, " after ", views_.size(), " views");
    const uint32_t taps = samples_ * kTaps;
    std::vector<uint32_t> at(size_t(count) * taps);
    std::vector<float> weight(at.size());
    if (count > 0) {
        auto at_dev = device_.create_buffer<uint32_t>(at.size());
        auto weight_dev = device_.create_buffer<float>(at.size());
        stream << taps_(covered, surfaces.records, surfaces.tangents, params, data.textures, data.materials,
                        data.lights, data.views[view].eye, at_dev, weight_dev)
                      .dispatch(count)
               << at_dev.copy_to(at.data()) << weight_dev.copy_to(weight.data()) << synchronize();
    }
    // Records by texel (then by entry: a run's sum adds in one order), each texel's split into runs.
    std::vector<std::pair<uint32_t, uint2>> records;
    for (size_t i = 0; i < at.size(); ++i)
        if (at[i] != kNoSlot && weight[i] != 0.0f)
            records.push_back({at[i], uint2(uint32_t(i / taps) * samples_ + uint32_t(i % taps) / kTaps,
                                            std::bit_cast<uint32_t>(weight[i]))});
    std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<uint4> runs;
    std::vector<uint2> list;
    for (size_t i = 0; i < records.size(); ++i) {
        if (i == 0 || records[i].first != records[i - 1].first || list.size() - runs.back().y >= kRunRecords)
            runs.push_back(uint4(records[i].first, uint32_t(list.size()), 0, 0));
        list.push_back(records[i].second);
        runs.back().z = uint32_t(list.size());
    }
    for (size_t i = 1; i < runs.size(); ++i)
        if (runs[i].x == runs[i - 1].x) runs[i].w = runs[i - 1].w = 1;   // a split list: its runs add by atomics
    View v;
    v.run_count = uint32_t(runs.size());
    v.runs = upload(device_, stream, runs);
    v.records = upload(device_, stream, list);
    views_.push_back(std::move(v));
    if (size_t(count) * samples_ > dsample_.size()) dsample_ = device_.create_buffer<float4>(size_t(count) * samples_);
    stream << synchronize();
}

void TexelGather::gather(Stream& stream, uint32_t view, const Buffer<float>& texel_grad) const {
    const View& v = views_.at(view);
    if (v.run_count > 0) stream << gather_(v.runs, v.records, dsample_, texel_grad).dispatch(v.run_count);
}

} // namespace adjoint::app
