// The camera's parameter kinds' pieces (camera.eye|target|fov_y|intrinsics) for the table in parameter_kinds.cpp.
#pragma once
#include <adjoint/app/parameter_kinds.h>

#include <span>
#include <string>
#include <vector>

namespace adjoint::app::detail {

// Why the camera's values are no parameter of this scene, or "" (the refusals of ParameterKindInfo).
std::string single_view(const Scene& s, uint32_t target, uint32_t property);
std::string fov_camera(const Scene& s, uint32_t target, uint32_t property);
std::string intrinsics_camera(const Scene& s, uint32_t target, uint32_t property);

// camera.intrinsics: [fx, fy, cx, cy] of a view; setting them sets the camera and every view.
void read_intrinsics(const Scene& s, uint32_t view, float* out);
void write_intrinsics(Scene& s, const Parameter& p, std::span<const float> value);

std::vector<float> init_fov(const JsonValue& init, const InitContext& context, Parameter& p);
std::vector<float> init_intrinsics(const JsonValue& init, const InitContext& context, Parameter& p);

} // namespace adjoint::app::detail
