// IR -> GLSL 450 compute shader: deterministic, readable (one named value per line), with the binding
// layout the runtime needs to dispatch it (engine/codegen/emitter.h lists the emitter's files).
#pragma once
#include <adjoint/codegen/binding_layout.h>
#include <adjoint/ir/function.h>

#include <string>
#include <vector>

namespace adjoint::codegen {

// Subgroup operation classes, as VkSubgroupFeatureFlagBits numbers them.
enum SubgroupFeature : uint32_t {
    kSubgroupBasic = 1,        // subgroup_size, subgroup_invocation_id, subgroup_elect
    kSubgroupVote = 2,         // subgroup_all, subgroup_any, subgroup_all_equal
    kSubgroupArithmetic = 4,   // subgroup_add, subgroup_min, subgroup_max, subgroup_exclusive_add
    kSubgroupBallot = 8,       // subgroup_ballot, subgroup_broadcast_first
};

// What the device supports. The defaults claim everything (golden tests emit for an ideal device); the
// runtime fills in its device's features, and emission refuses what a kernel uses and the device lacks,
// naming the C++ line.
struct GlslOptions {
    bool float_atomic_add = true;       // buffers: GL_EXT_shader_atomic_float (else: CAS loops)
    bool float_atomic_min_max = true;   // buffers: GL_EXT_shader_atomic_float2 (else: CAS loops)
    bool shared_float_atomic_add = true;       // shared memory: shaderSharedFloat32AtomicAdd (else: CAS loops)
    bool shared_float_atomic_min_max = true;   // shared memory: shaderSharedFloat32AtomicMinMax (else: CAS loops)
    bool int64 = true;                  // shaderInt64: uint64 values
    bool int64_atomics = true;          // shaderBufferInt64Atomics: atomics on uint64 buffers
    bool shared_int64_atomics = true;   // shaderSharedInt64Atomics: atomics on uint64 shared arrays
    uint32_t subgroup_features = ~0u;   // SubgroupFeature bits usable in compute shaders
    // Buffers a kernel only reads are bound as uniform texel buffers of 32-bit words and read with texelFetch
    // (binding_layout.h, ArgSlot::texel_words). On lavapipe a storage-buffer read is a loop over the SIMD lanes
    // with a branch each, a texel fetch one vector gather: reads cost a half to a sixth (adjoint-bench
    // --only texel_reads). Off by default: the golden tests emit storage buffers; the runtime turns it on for
    // CPU devices where every buffer it may bind fits a texel buffer (glsl_options.cpp).
    bool texel_reads = false;
};

// The shader, and the binding layout it declares (binding_layout.h), which the runtime binds from.
struct GlslKernel : BindingLayout {
    std::string source;
    ir::TrapTable traps;                // the messages of the codes its traps write
    uint32_t shared_bytes = 0;          // work-group memory: the kernel's shared arrays and the loop marks
    std::string barrier_at;             // the C++ line of the first sync_block(), empty when none
};

// `f` must be an inlined kernel without autodiff ops (see the runtime's compile pipeline).
GlslKernel emit_glsl(const ir::Function& f, const GlslOptions& options = {});

// GLSL spelling of a value type ("vec3", "mat4", "float[4]", "Particle").
std::string glsl_type(const ir::Type* t);

} // namespace adjoint::codegen
