// What report.png and the pictures beside params.json show, gathered from a run's optimizer and loss.csv.
#pragma once
#include <adjoint/app/image_io.h>
#include <adjoint/app/loss_log.h>
#include <adjoint/app/optimization.h>
#include <adjoint/app/params_file.h>
#include <adjoint/app/report.h>

#include <vector>

namespace adjoint::app {

// The curves: the loss (log), the image PSNR (linear, dB) when finite somewhere, and one per group of free
// parameters of a kind (the worst error of the group per iteration, in its units) when any is known.
std::vector<ReportCurve> report_curves(const std::vector<ParameterState>& parameters, const std::vector<LossRow>& rows);

// The report's inputs: view 0 from the images given (start.png's image among them), the other sampled views
// rendered now, every texture parameter with its last gradient (data textures of `scene` drawn as stored).
ReportInputs report_inputs(Optimizer& opt, const std::vector<ParameterState>& parameters, const Scene& scene,
                           const Image& target, const Image& start, const Image& final,
                           const std::vector<LossRow>& rows);

// params.json's records: values, truths, errors (values and truths in the scene file's units, value_in_file_units);
// textures with their gradient pictures.
std::vector<ParamRecord> param_records(Optimizer& opt, const std::vector<ParameterState>& parameters,
                                       const Scene& scene);

// The worst error of each unit among these errors (file order of `parameters`), for the progress line.
std::vector<std::pair<std::string, double>> unit_errors(const std::vector<ParameterState>& parameters,
                                                        const std::vector<std::optional<double>>& errors);

} // namespace adjoint::app
