// report.png's inputs and params.json's records (texture pictures, gradients) from a finished run.
#include "run/run_report.h"

#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/run.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace adjoint::app {
namespace {

Image texture_image(const ParameterState& p, const std::vector<float>& v) {
    Image img(int(p.texture_width), int(p.texture_height), 3);
    img.pixels = v;
    return img;
}

bool is_texture(const ParameterState& p) { return kind_info(p.kind).storage == ParameterStorage::texture; }

// Whether the texture parameter at `path` holds data (is_data_texture): its pictures show it as stored.
bool holds_data(const Scene& scene, const std::string& path) {
    const std::optional<Parameter> found = find_parameter(scene, path);
    return found && is_data_texture(scene, *found);
}

std::string upper(std::string s) {
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// "meshes.bunny.rotation" -> group "MESHES ROTATION" (a kind of one collection).
std::string group_of(const ParameterState& p) {
    const ParameterKindInfo& k = kind_info(p.kind);
    std::string property = p.path.substr(p.path.rfind('.') + 1);
    return upper(std::string(collection_name(k.collection)) + " " + property);
}

} // namespace

std::vector<ReportCurve> report_curves(const std::vector<ParameterState>& parameters, const std::vector<LossRow>& rows) {
    std::vector<ReportCurve> curves(1);
    curves[0] = {"LOSS", {}, true};
    ReportCurve psnr{"IMAGE PSNR (DB)", {}, false};
    for (const LossRow& r : rows) {
        curves[0].values.push_back(r.loss);
        psnr.values.push_back(r.image_psnr);
    }
    if (std::any_of(psnr.values.begin(), psnr.values.end(), [](double v) { return std::isfinite(v); }))
        curves.push_back(psnr);
    // Groups in the order their first parameter comes; each curve the group's worst error per iteration.
    std::vector<std::string> order;
    std::map<std::string, std::vector<size_t>> members;
    for (size_t i = 0; i < parameters.size(); ++i) {
        const std::string g = group_of(parameters[i]);
        if (!members.count(g)) order.push_back(g);
        members[g].push_back(i);
    }
    for (const std::string& g : order) {
        const std::vector<size_t>& m = members[g];
        std::string unit = error_unit_name(error_unit(kind_info(parameters[m[0]].kind)));
        std::replace(unit.begin(), unit.end(), '_', ' ');   // "SCENE UNITS" in a title
        std::string title = g + " ERROR (" + upper(unit) + (m.size() > 1 ? ", WORST OF " + std::to_string(m.size()) : "") + ")";
        ReportCurve c{title, {}, true};
        bool any = false;
        for (const LossRow& r : rows) {
            double worst = NAN;
            for (size_t i : m)
                if (i < r.errors.size() && r.errors[i]) worst = std::isnan(worst) ? *r.errors[i] : std::max(worst, *r.errors[i]);
            any = any || !std::isnan(worst);
            c.values.push_back(worst);
        }
        if (any) curves.push_back(std::move(c));
    }
    return curves;
}

ReportInputs report_inputs(Optimizer& opt, const std::vector<ParameterState>& parameters, const Scene& scene,
                           const Image& target, const Image& start, const Image& final,
                           const std::vector<LossRow>& rows) {
    ReportInputs in;
    in.view_count = opt.view_count();
    for (uint32_t v : report_view_sample(in.view_count)) {
        if (v == 0) in.views.push_back(ReportView{0, target, final, start});
        else in.views.push_back(ReportView{v, to_image(opt.target(v)), to_image(opt.render_current(v)), std::nullopt});
    }
    std::vector<float> value, gradient;
    for (size_t i = 0; i < parameters.size(); ++i) {
        const ParameterState& p = parameters[i];
        if (!is_texture(p)) continue;
        opt.parameter_now(i, value, gradient);
        ReportTexture t{p.path, texture_image(p, value), std::nullopt, texture_image(p, gradient)};
        if (p.true_value) t.target = texture_image(p, *p.true_value);
        t.data = holds_data(scene, p.path);
        in.textures.push_back(std::move(t));
    }
    in.curves = report_curves(parameters, rows);
    return in;
}

std::vector<ParamRecord> param_records(Optimizer& opt, const std::vector<ParameterState>& parameters,
                                       const Scene& scene) {
    std::vector<ParamRecord> records;
    std::vector<float> value, gradient;
    for (size_t i = 0; i < parameters.size(); ++i) {
        const ParameterState& p = parameters[i];
        ParamRecord r;
        r.path = p.path;
        r.error = p.error;
        if (is_texture(p)) {
            r.radiance = kind_info(p.kind).hi > 1;   // values past 1: an environment map's radiance
            r.data = holds_data(scene, p.path);
            r.texture = texture_image(p, p.value);
            if (p.true_value) r.true_texture = texture_image(p, *p.true_value);
            opt.parameter_now(i, value, gradient);
            r.gradient_picture = gradient_picture(texture_image(p, gradient));
        } else {
            r.value = value_in_file_units(scene, p.kind, p.value);
            if (p.true_value) r.true_value = value_in_file_units(scene, p.kind, *p.true_value);
        }
        records.push_back(std::move(r));
    }
    return records;
}

std::vector<std::pair<std::string, double>> unit_errors(const std::vector<ParameterState>& parameters,
                                                        const std::vector<std::optional<double>>& errors) {
    std::vector<std::pair<std::string, double>> out;
    for (size_t i = 0; i < parameters.size() && i < errors.size(); ++i) {
        if (!errors[i]) continue;
        const std::string unit = error_unit_name(error_unit(kind_info(parameters[i].kind)));
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == unit; });
        if (it == out.end()) out.emplace_back(unit, *errors[i]);
        else it->second = std::max(it->second, *errors[i]);
    }
    return out;
}

} // namespace adjoint::app
