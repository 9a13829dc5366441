// The binding layout: the contract between a kernel's GLSL and the runtime that dispatches it (bindings,
// push-constant offsets, the status and scratch buffers, and the rows of a 1D dispatch over the device's group
// limit). Codegen declares from it; the runtime binds from it; neither derives it again.
#pragma once
#include <adjoint/ir/function.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace adjoint::codegen {

// Where one kernel parameter goes.
struct ArgSlot {
    enum class Kind { Buffer, Image, Push } kind;
    uint32_t binding = 0;               // buffer or image binding (images follow all buffers)
    uint32_t offset = 0;                // push-constant byte offset (Push)
    const ir::Type* type = nullptr;
    bool written = false;               // the kernel writes this buffer or image
    bool stored = false;                // ... with plain stores, not only atomics
    // Buffers only: 0, a storage buffer; 1, 2 or 4, a uniform texel buffer read-only through a view of that
    // many 32-bit words a texel (R32_UINT, R32G32_UINT, R32G32B32A32_UINT), as many texels an element as its
    // host size takes (GlslOptions::texel_reads).
    uint32_t texel_words = 0;
};

// Descriptor set 0 holds the parameters' buffers in parameter order, then the status buffer and the scratch
// buffer where the kernel uses them, then the parameters' images in parameter order. The push constants hold
// the dispatch size (a uvec3 at kDispatchSizeOffset), then each value parameter at its host (C++) alignment,
// the whole rounded up to 16 bytes.
struct BindingLayout {
    std::vector<ArgSlot> args;          // one per kernel parameter
    uint32_t buffer_count = 0;          // parameters' buffers, plus the status and scratch buffers when used
    uint32_t image_count = 0;
    uint32_t push_bytes = 0;            // dispatch size (uvec3) first, then value arguments
    bool uses_status = false;           // a trap reports to the status buffer, bound after the parameters' buffers
    uint32_t status_binding = 0;
    bool uses_scratch = false;          // large autodiff tapes live in a runtime-managed scratch buffer
    uint32_t scratch_binding = 0;       // after the status buffer
    uint32_t scratch_words_per_thread = 0;
    std::vector<uint32_t> texel_words;  // per buffer binding: ArgSlot::texel_words (0 for status and scratch)

    // An image parameter's place among the images (its binding counts all buffers first).
    uint32_t image_index(const ArgSlot& image) const { return image.binding - buffer_count; }
};

inline constexpr uint32_t kDispatchSizeOffset = 0;   // the push constants open with the dispatch size
inline constexpr uint32_t kDispatchSizeBytes = 12;

// The layout of kernel `f`: its parameters in order, which of its buffers and images it writes, whether it
// traps (status) and keeps tapes in scratch; with texel_reads, the buffers it only reads as texel buffers
// (those whose elements are whole 32-bit words). Throws adjoint::Error naming the kernel and the argument for
// a parameter whose C++ bytes GLSL cannot read (bools inside buffers, vectors or structs).
BindingLayout binding_layout(const ir::Function& f, bool texel_reads = false);

// The words a texel of a read-only buffer of `element` takes: the largest of 4, 2 and 1 that divides its
// host size in words; 0 where it cannot be read as words (uint64 lanes).
uint32_t texel_words_for(const ir::Type* element);

// ---- The rows of a 1D dispatch ----------------------------------------------------------------------------
// 1D kernels take ceil(n / block) groups, laid out as rows of at most max_groups[0] groups when there are
// more; the kernel forms its linear group again as x + y * gl_NumWorkGroups.x (dispatch_prologue) and stops the
// last row's surplus groups before it forms their thread index, which could pass 2^32. 2D and 3D kernels take
// ceil(size / block) groups per dimension.

// Workgroup counts for a dispatch: a pure function of the size, the kernel's block and the device's limits.
// Throws adjoint::Error naming the kernel when the device's group limits cannot hold the grid, or when
// group * block + local could pass 2^32 (possible only for sizes near 2^32 in blocks that are not powers of
// two). A size of 0 in any dimension plans no groups.
std::array<uint32_t, 3> plan_dispatch(std::string_view kernel, uint32_t dimension, std::array<uint32_t, 3> size,
                                      std::array<uint32_t, 3> block, std::array<uint32_t, 3> max_groups);

// The first lines of a kernel's main(), which return for the threads past the dispatch size. A 1D kernel forms
// its group (adjoint_group) and thread index (adjoint_id) from the rows plan_dispatch lays out, and its surplus
// groups return before their index is formed.
std::vector<std::string> dispatch_prologue(uint32_t dimension, uint32_t block_x);

} // namespace adjoint::codegen
