// The umbrella header: everything a user of the engine writes against (see the API contract).
#pragma once
#include <adjoint/core/error.h>
#include <adjoint/dsl/autodiff.h>
#include <adjoint/dsl/builtins.h>
#include <adjoint/dsl/control.h>
#include <adjoint/dsl/expr.h>
#include <adjoint/dsl/host_types.h>
#include <adjoint/dsl/kernel.h>
#include <adjoint/dsl/resources.h>
#include <adjoint/dsl/shared.h>
#include <adjoint/dsl/struct.h>
#include <adjoint/dsl/texture.h>
#include <adjoint/runtime/device.h>
#include <adjoint/runtime/gradcheck.h>
#include <adjoint/runtime/profile.h>
#include <adjoint/runtime/texture.h>
