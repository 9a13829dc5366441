// The binding layout of a kernel and the rows of a 1D dispatch (see binding_layout.h): one place for what the
// GLSL declares and the runtime binds.
#include <adjoint/codegen/binding_layout.h>

#include "emitter.h"

#include <adjoint/core/error.h>
#include <adjoint/ir/walk.h>

#include <set>

namespace adjoint::codegen {

using namespace ir;

namespace {

bool holds_bool(const Type* t) { return emit::holds(t, [](const Type* l) { return l->is_bool(); }); }

// C++ stores a bool in 1 byte and GLSL in 4: a parameter whose bytes hold a bool anywhere but alone (which the
// runtime widens) cannot be shared.
void check_parameter(const Function& f, size_t k, const Type* t) {
    if (t->kind() == Type::Kind::Buffer) {
        if (t->element()->is_bool()) fail("buffers of bool are not supported (kernel ", f.name(), ")");
        if (holds_bool(t->element()))
            fail("argument ", k, " of kernel '", f.name(), "': a buffer of ", t->element()->to_string(),
                 ", which holds a bool: C++ stores a bool in 1 byte and GLSL in 4, so the padding bytes "
                 "would be read as part of it; use an int or uint member");
    } else if (t->kind() != Type::Kind::Image && holds_bool(t) && !t->is_scalar()) {
        fail("argument ", k, " of kernel '", f.name(), "' is a ", t->to_string(),
             ", which holds bools: C++ stores a bool in 1 byte and GLSL in 4; pass ints or uints");
    }
}

// What the body does with the layout's resources: the parameters it writes (stored: with plain stores), and
// whether it traps or keeps tapes in scratch.
struct BodyUse {
    std::set<int64_t> written, stored;
    bool status = false, scratch = false;
};

BodyUse body_use(const Function& f) {
    BodyUse use;
    walk(f, f.body(), [&](ValueId id) {
        const Inst& in = f.inst(id);
        if (in.op == Op::BufferWrite || in.op == Op::BufferAtomic || in.op == Op::ImageWrite)
            use.written.insert(f.inst(in.operands[0]).imm);
        if (in.op == Op::BufferWrite || in.op == Op::ImageWrite) use.stored.insert(f.inst(in.operands[0]).imm);
        if (in.op == Op::Trap) use.status = true;
        if (in.op == Op::ScratchRead || in.op == Op::ScratchWrite) use.scratch = true;
    });
    return use;
}

} // namespace

uint32_t texel_words_for(const Type* element) {
    if (emit::holds_u64(element) || element->host_size() % 4 != 0) return 0;
    const uint32_t words = element->host_size() / 4;
    return words % 4 == 0 ? 4 : words % 2 == 0 ? 2 : 1;
}

BindingLayout binding_layout(const Function& f, bool texel_reads) {
    const BodyUse use = body_use(f);
    BindingLayout layout;
    layout.uses_status = use.status;
    layout.uses_scratch = use.scratch;
    uint32_t buffers = 0;
    for (const Type* t : f.params) buffers += t->kind() == Type::Kind::Buffer;
    uint32_t next_buffer = 0;
    uint32_t next_image = buffers + (use.status ? 1 : 0) + (use.scratch ? 1 : 0);
    uint32_t offset = kDispatchSizeOffset + kDispatchSizeBytes;
    for (size_t k = 0; k < f.params.size(); ++k) {
        const Type* t = f.params[k];
        check_parameter(f, k, t);
        ArgSlot slot{ArgSlot::Kind::Push};
        slot.type = t;
        slot.written = use.written.count(int64_t(k)) > 0;
        slot.stored = use.stored.count(int64_t(k)) > 0;
        if (t->kind() == Type::Kind::Buffer) {
            slot.kind = ArgSlot::Kind::Buffer;
            slot.binding = next_buffer++;
            if (texel_reads && !slot.written) slot.texel_words = texel_words_for(t->element());
        } else if (t->kind() == Type::Kind::Image) {
            slot.kind = ArgSlot::Kind::Image;
            slot.binding = next_image++;
            ++layout.image_count;
        } else {
            uint32_t align = t->host_align();
            offset = (offset + align - 1) / align * align;
            slot.offset = offset;
            offset += t->host_size();
        }
        layout.args.push_back(slot);
    }
    layout.buffer_count = buffers;
    layout.texel_words.assign(buffers, 0);
    for (const ArgSlot& slot : layout.args)
        if (slot.kind == ArgSlot::Kind::Buffer) layout.texel_words[slot.binding] = slot.texel_words;
    if (use.status) {
        layout.status_binding = layout.buffer_count++;
        layout.texel_words.push_back(0);
    }
    if (use.scratch) {
        layout.scratch_binding = layout.buffer_count++;
        layout.texel_words.push_back(0);
        layout.scratch_words_per_thread = f.scratch_words_per_thread;
    }
    layout.push_bytes = (offset + 15) / 16 * 16;
    return layout;
}

std::array<uint32_t, 3> plan_dispatch(std::string_view kernel, uint32_t dimension, std::array<uint32_t, 3> size,
                                      std::array<uint32_t, 3> block, std::array<uint32_t, 3> max_groups) {
    if (size[0] == 0 || size[1] == 0 || size[2] == 0) return {0, 0, 0};
    // In 64 bits: n + block - 1 wraps around for n near 2^32 and would dispatch (almost) nothing.
    std::array<uint64_t, 3> groups{};
    for (int i = 0; i < 3; ++i) groups[i] = (uint64_t(size[i]) + block[i] - 1) / block[i];
    // A thread's index (group * block + local) must not pass 2^32, where it would wrap to a low index and
    // run that thread twice; only a block that is not a power of two can get there.
    for (int i = 0; i < 3; ++i)
        if (groups[i] * block[i] > (uint64_t(1) << 32))
            fail("dispatch of '", kernel, "': ", size[i], " threads in dimension ", i, " in blocks of ", block[i],
                 " would number threads past 2^32; dispatch fewer, or use a power-of-two block size");
    if (dimension == 1 && groups[0] > max_groups[0]) {
        // More groups than the device allows in x become rows in y.
        const uint64_t needed = groups[0];
        groups[1] = (needed + max_groups[0] - 1) / max_groups[0];
        groups[0] = max_groups[0];
        if (groups[1] > max_groups[1])
            fail("dispatch of '", kernel, "': ", size[0], " threads need ", needed, " workgroups of ", block[0],
                 ", more than the device's limits of ", max_groups[0], " x ", max_groups[1], " hold");
    }
    for (int i = 0; i < 3; ++i)
        if (groups[i] > max_groups[i])
            fail("dispatch of '", kernel, "': ", groups[i], " workgroups in dimension ", i,
                 " exceed the device limit of ", max_groups[i], " (", size[i], " threads in blocks of ", block[i],
                 ")");
    return {uint32_t(groups[0]), uint32_t(groups[1]), uint32_t(groups[2])};
}

std::vector<std::string> dispatch_prologue(uint32_t dimension, uint32_t block_x) {
    if (dimension != 1) return {"if (any(greaterThanEqual(gl_GlobalInvocationID, pc.dispatch_size))) return;"};
    // The surplus groups of the last row stop before their index is formed: past 2^32 threads it would wrap
    // to a low index and run that thread twice.
    const std::string block = std::to_string(block_x) + "u";
    return {"const uint adjoint_group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;",
            "if (adjoint_group > (pc.dispatch_size.x - 1u) / " + block + ") return;",
            "const uvec3 adjoint_id = uvec3(adjoint_group * " + block + " + gl_LocalInvocationID.x, 0u, 0u);",
            "if (adjoint_id.x >= pc.dispatch_size.x) return;"};
}

} // namespace adjoint::codegen
