// The binding layout (codegen/binding_layout.h): where the status and scratch buffers go among the parameters'
// buffers and images, and that the GLSL declares each resource at the binding the runtime binds it to.
#include <adjoint/adjoint.h>
#include <adjoint/codegen/binding_layout.h>
#include <adjoint/codegen/glsl.h>
#include <adjoint/pipeline/lower.h>

#include <gtest/gtest.h>

namespace adjoint::test {

TEST(BindingLayout, StatusAndScratchFollowTheBuffersAndPrecedeTheImages) {
    Kernel1D k = [](BufferFloat xs, ImageFloat img, BufferFloat out, Float scale) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i) * scale;
        $autodiff {
            requires_grad(x);
            Float2 p = make_float2(x, 0.5f);
            tape_capacity(20000);   // 160,000 bytes per thread: in scratch; a while loop may overflow it (a trap)
            $while (p.y < 100.0f) { p = make_float2(sin(p.x) * 0.5f + x, p.y + 1.0f); };
            backward(p.x);
            out.write(i, grad(x));
        };
    };
    k.set_name("layout_kernel");
    auto lowered = pipeline::lower(*k.function());
    ASSERT_EQ(lowered.tapes.size(), 1u);
    ASSERT_TRUE(lowered.tapes[0].in_scratch);

    const codegen::BindingLayout layout = codegen::binding_layout(*lowered.function);
    ASSERT_EQ(layout.args.size(), 4u);
    EXPECT_EQ(layout.args[0].kind, codegen::ArgSlot::Kind::Buffer);
    EXPECT_EQ(layout.args[0].binding, 0u);
    EXPECT_FALSE(layout.args[0].written);
    EXPECT_EQ(layout.args[2].kind, codegen::ArgSlot::Kind::Buffer);
    EXPECT_EQ(layout.args[2].binding, 1u);
    EXPECT_TRUE(layout.args[2].written);
    EXPECT_TRUE(layout.uses_status);
    EXPECT_EQ(layout.status_binding, 2u);
    EXPECT_TRUE(layout.uses_scratch);
    EXPECT_EQ(layout.scratch_binding, 3u);
    EXPECT_EQ(layout.scratch_words_per_thread * 4, lowered.tapes[0].bytes_per_thread);
    EXPECT_EQ(layout.buffer_count, 4u);
    EXPECT_EQ(layout.args[1].kind, codegen::ArgSlot::Kind::Image);
    EXPECT_EQ(layout.args[1].binding, 4u) << "images follow every buffer, status and scratch included";
    EXPECT_EQ(layout.image_index(layout.args[1]), 0u);
    EXPECT_EQ(layout.image_count, 1u);
    EXPECT_EQ(layout.args[3].kind, codegen::ArgSlot::Kind::Push);
    EXPECT_EQ(layout.args[3].offset, codegen::kDispatchSizeOffset + codegen::kDispatchSizeBytes);
    EXPECT_EQ(layout.push_bytes, 16u);

    // The emitter declares from the same layout.
    codegen::GlslKernel glsl = codegen::emit_glsl(*lowered.function);
    EXPECT_EQ(glsl.status_binding, layout.status_binding);
    EXPECT_EQ(glsl.scratch_binding, layout.scratch_binding);
    EXPECT_EQ(glsl.args[1].binding, layout.args[1].binding);
    for (const char* decl : {"layout(std430, set = 0, binding = 0) buffer Buffer0 { float b0[]; };",
                                    "layout(std430, set = 0, binding = 1) buffer Buffer2 { float b2[]; };",
                                    "layout(std430, set = 0, binding = 2) buffer Status { uint adjoint_status[]; };",
                                    "layout(std430, set = 0, binding = 3) buffer Scratch { uint adjoint_scratch[]; };",
                                    "layout(set = 0, binding = 4, rgba32f) uniform image2D img1;",
                                    "    layout(offset = 12) float a3;"})
        EXPECT_NE(glsl.source.find(decl), std::string::npos) << decl << "\n" << glsl.source;
}

// With texel_reads (the runtime's choice on lavapipe), the buffers a kernel only reads become uniform texel
// buffers of as many words a texel as their element's host size allows; the ones it writes stay storage buffers.
TEST(BindingLayout, ReadOnlyBuffersBecomeTexelBuffersOfWholeWords) {
    Kernel1D k = [](BufferFloat a, BufferFloat2 b, BufferFloat3 c, BufferVar<uint3> d, BufferFloat out,
                    BufferUInt counts) noexcept {
        auto i = dispatch_id().x;
        out.write(i, a.read(i) + b.read(i).y + c.read(i).z + cast<float>(d.read(i).x + a.size()));
        counts.atomic(0u).fetch_add(1u);
    };
    k.set_name("texel_kernel");
    auto lowered = pipeline::lower(*k.function());
    const codegen::BindingLayout plain = codegen::binding_layout(*lowered.function);
    for (const auto& slot : plain.args) EXPECT_EQ(slot.texel_words, 0u);
    const codegen::BindingLayout layout = codegen::binding_layout(*lowered.function, true);
    const uint32_t want[] = {1, 2, 4, 4, 0, 0};   // float, float2, float3 (16 bytes), uint3; written; atomics
    ASSERT_EQ(layout.args.size(), 6u);
    for (size_t k = 0; k < 6; ++k) EXPECT_EQ(layout.args[k].texel_words, want[k]) << "argument " << k;
    EXPECT_EQ(layout.texel_words, std::vector<uint32_t>(std::begin(want), std::end(want)));

    codegen::GlslOptions options;
    options.texel_reads = true;
    const std::string glsl = codegen::emit_glsl(*lowered.function, options).source;
    for (const char* text : {"layout(set = 0, binding = 0) uniform usamplerBuffer b0;",
                             "layout(set = 0, binding = 2) uniform usamplerBuffer b2;",
                             "layout(std430, set = 0, binding = 4) buffer Buffer4 { float b4[]; };",
                             "texelFetch(b1, ", "uint(textureSize(b0))"})
        EXPECT_NE(glsl.find(text), std::string::npos) << text << "\n" << glsl;
    EXPECT_EQ(glsl.find("b0["), std::string::npos) << glsl;
}

TEST(BindingLayout, ParametersHoldingBoolsAreRefusedByName) {
    Kernel1D k = [](BufferFloat out, Bool3 flags) noexcept {
        $if (flags.x) { out.write(dispatch_id().x, 1.0f); };
    };
    k.set_name("bool_kernel");
    auto lowered = pipeline::lower(*k.function());
    try {
        codegen::binding_layout(*lowered.function);
        FAIL() << "a bool3 argument was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("argument 1 of kernel 'bool_kernel' is a bool3, which holds bools"),
                  std::string::npos) << e.what();
    }
}

} // namespace adjoint::test
