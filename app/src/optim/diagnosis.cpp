// Optimizer::attribute_pixels (--diagnose): slot tables for up to kDiagnoseSlots parameters at a time, the
// vertex directions when one of them moves geometry, then per view the objective's diagnose pass, read back.
#include "stages.h"

#include "render/diagnose_stage.h"

#include <adjoint/app/parameter_kinds.h>

#include <algorithm>

namespace adjoint::app {

namespace {

// The slots of parameters [first, first + n) of `which`: per float of the parameter buffer and per texture.
DiagnoseBuffers slot_tables(OptimizerStages& s, const std::vector<size_t>& which, size_t first, size_t n,
                            uint32_t pixels) {
    std::vector<uint32_t> slot(s.params.value.size(), kDiagnoseSlots);
    std::vector<uint32_t> texture(std::max<size_t>(s.data.textures.size(), 1), kDiagnoseSlots);
    DiagnoseBuffers d;
    for (size_t j = 0; j < n; ++j) {
        const FreeParam& f = s.free.at(which.at(first + j));
        std::fill_n(slot.begin() + f.offset, f.p.size, uint32_t(j));
        d.geometry = d.geometry || is_geometry_parameter(f.p.kind);
    }
    // A texture's level 0 is its slot's floats: its samples belong to the parameter that holds them.
    for (const auto& sl : s.data.layout.slots)
        if (kind_info(sl.kind).storage == ParameterStorage::texture && sl.element < texture.size())
            texture[sl.element] = slot[sl.offset];
    const GeometryStage* g = s.objective->geometry();
    d.geometry = d.geometry && g && g->vertex_count() > 0;
    d.param_slot = upload(s.device, s.stream, slot);
    d.texture_slot = upload(s.device, s.stream, texture);
    const size_t vertices = d.geometry ? g->vertex_count() : 0;
    d.directions = s.device.create_buffer<float>(std::max<size_t>(vertices * kVertexDirections * kDiagnoseSlots, 1));
    d.out = s.device.create_buffer<float>(size_t(kDiagnoseSlots + 1) * pixels);
    if (d.geometry) g->directions(s.device, s.stream, s.params.value, d.param_slot, d.directions);
    s.stream << synchronize();   // the host tables go out of scope
    return d;
}

} // namespace

PixelAttribution Optimizer::attribute_pixels(const std::vector<size_t>& which, bool unit,
                                              std::optional<uint32_t> only_view) {
    auto& s = *s_;
    const uint32_t views = view_count(), pixels = s.objective->pixels();
    PixelAttribution r;
    r.width = s.data.views[0].width;
    r.height = s.data.views[0].height;
    r.views = views;
    r.images.assign(which.size(), std::vector<float>(size_t(views) * pixels, 0.0f));
    r.edges.assign(size_t(views) * pixels, 0.0f);
    // The loss's scale as evaluate() takes it: the mean over pixels, channels and every view.
    const float scale = 1.0f / (float(pixels) * 3.0f * float(views));
    std::vector<float> host(size_t(kDiagnoseSlots + 1) * pixels);
    for (size_t first = 0; first < which.size(); first += kDiagnoseSlots) {
        const size_t n = std::min<size_t>(kDiagnoseSlots, which.size() - first);
        const DiagnoseBuffers d = slot_tables(s, which, first, n, pixels);
        for (uint32_t v = 0; v < views; ++v) {
            if (only_view && v != *only_view) continue;
            s.objective->diagnose(s.params, v, unit, scale, d);
            s.stream << d.out.copy_to(host.data()) << synchronize();
            for (size_t j = 0; j < n; ++j)
                std::copy_n(host.begin() + j * pixels, pixels, r.images[first + j].begin() + size_t(v) * pixels);
            for (uint32_t i = 0; i < pixels; ++i)
                r.edges[size_t(v) * pixels + i] = std::max(r.edges[size_t(v) * pixels + i], host[kDiagnoseSlots * pixels + i]);
        }
    }
    return r;
}

} // namespace adjoint::app
