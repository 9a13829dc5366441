// Wrong arguments at dispatch time (count, buffer types, images, values): the Error names kernel and types.
#include "support/device_fixture.h"
#include "support/error_text.h"

#include <cmath>

namespace adjoint::test {

class DispatchErrors : public DeviceTest {
protected:
    Kernel1D<void(BufferFloat, BufferFloat, Float)> kernel = [](BufferFloat x, BufferFloat out, Float scale) noexcept {
        auto i = dispatch_id().x;
        out.write(i, x.read(i) * scale);
    };
    Shader<1> shader = device.compile(kernel, ShaderOptions{"scale_kernel"});
    Buffer<float> x = device.create_buffer<float>(4);
    Buffer<float> out = device.create_buffer<float>(4);
};

TEST_F(DispatchErrors, TooFewAndTooManyArguments) {
    EXPECT_TRUE(throws_error([&] { (void)shader(x); }, "kernel 'scale_kernel' takes 3 arguments, got 1"));
    EXPECT_TRUE(throws_error([&] { (void)shader(x, out, 1.0f, 2.0f); },
                             "kernel 'scale_kernel' takes 3 arguments, got 4"));
}

TEST_F(DispatchErrors, ImageWhereABufferIsExpected) {
    auto img = device.create_image<float>(PixelFormat::RGBA32F, 2, 2);
    EXPECT_TRUE(throws_error([&] { (void)shader(img, out, 1.0f); },
                             "argument 0 of kernel 'scale_kernel' must be buffer<float>, got image2d"));
}

TEST_F(DispatchErrors, BufferOfTheWrongElementType) {
    auto ints = device.create_buffer<int32_t>(4);
    EXPECT_TRUE(throws_error([&] { (void)shader(x, ints, 1.0f); },
                             "argument 1 of kernel 'scale_kernel' must be buffer<float>, got buffer<int>"));
    auto vecs = device.create_buffer<float3>(4);
    EXPECT_TRUE(
        throws_error([&] { (void)shader(vecs, out, 1.0f); },
                     "argument 0 of kernel 'scale_kernel' must be buffer<float>, got buffer<float3>"));
}

TEST_F(DispatchErrors, ValueOfTheWrongType) {
    EXPECT_TRUE(throws_error([&] { (void)shader(x, out, float3(1, 2, 3)); },
                             "argument 2 of kernel 'scale_kernel' must be float, got float3"));
    auto msg2 = error_of([&] { (void)shader(x, out, true); });   // numbers convert (argument_conversion_test), bools not
    EXPECT_NE(msg2.find("argument 2 of kernel 'scale_kernel' is a float: got the bool true"), std::string::npos) << msg2;
    EXPECT_TRUE(throws_error(
        [&] { (void)shader(x, 1.0f, 1.0f); },
        "argument 1 of kernel 'scale_kernel' must be buffer<float>, got a floating-point number"));
    EXPECT_TRUE(throws_error([&] { (void)shader(x, out, out); },
                             "argument 2 of kernel 'scale_kernel' must be float, got buffer<float>"));
}

TEST_F(DispatchErrors, PlainNumbersConvertToTheScalarParameter) {
    // A double (not a DSL type) converts to the parameter's scalar type; correct arguments dispatch fine.
    std::vector<float> host{1, 2, 3, 4}, got(4);
    stream << x.copy_from(host.data()) << shader(x, out, 2.5).dispatch(4) << out.copy_to(got.data()) << synchronize();
    EXPECT_EQ(got, (std::vector<float>{2.5f, 5, 7.5f, 10}));
}

TEST_F(DispatchErrors, ShaderKeepsTheNameGivenInShaderOptions) {
    // The shader keeps its kernel's name from ShaderOptions, and the name appears in the generated GLSL.
    EXPECT_EQ(shader.name(), "scale_kernel");
    EXPECT_NE(shader.glsl().find("// kernel scale_kernel"), std::string::npos) << shader.glsl();
}

TEST_F(DispatchErrors, DispatchBeyondTheWorkgroupLimitIsReported) {
    // 1D dispatches take any size (groups beyond the x limit run as rows in y); 2D and 3D ones beyond the
    // device's group limit are refused with a message before anything is submitted. The numbers are
    // lavapipe's limit (65535 groups).
    if (device.name().find("llvmpipe") == std::string::npos) GTEST_SKIP() << "limit checked on lavapipe only";
    Kernel2D k2 = [](BufferFloat o) noexcept { o.write(0u, 1.0f); };
    auto s2 = device.compile(k2, {.name = "wide_2d_kernel"});
    EXPECT_TRUE(throws_error(
        [&] { stream << s2(out).dispatch(65536u * 16u, 1u) << synchronize(); },
        "dispatch of 'wide_2d_kernel': 65536 workgroups in dimension 0 exceed the device limit"));
}

TEST_F(DispatchErrors, ScratchTapeBeyondTheBufferRangeNamesTheKernelAndTheLoop) {
    // 160,000 bytes of tape per thread live in the scratch buffer; a million threads need 160 GB, more than
    // any device's storage-buffer range. Refused when the dispatch is made, before anything is allocated.
    Kernel1D k = [](BufferFloat xs, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        Float x = xs.read(i);
        $autodiff {
            requires_grad(x);
            Float2 p = make_float2(x, 0.5f);
            tape_capacity(20000);
            $while (p.y < 100.0f) { p = make_float2(sin(p.x) * 0.5f + x, p.y + 1.0f); };  // the loop's line
            backward(p.x);
            out.write(i, grad(x));
        };
    };
    const std::string loop_line = "dispatch_errors_test.cpp:" + std::to_string(__LINE__ - 5);
    auto tapes = device.compile(k, {.name = "tape_kernel"});
    ASSERT_EQ(tapes.tape_report().size(), 1u);
    ASSERT_TRUE(tapes.tape_report()[0].in_scratch);
    auto msg = error_of([&] { stream << tapes(x, out).dispatch(1u << 20); });
    EXPECT_NE(msg.find("kernel 'tape_kernel': the autodiff tapes of 1048576 x 1 x 1 threads need 167772160000 bytes "
                       "of scratch (160000 bytes per thread: the loop at "),
              std::string::npos) << msg;
    EXPECT_NE(msg.find(loop_line + " (160000 bytes per thread, 20000 iterations)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("over the device's storage-buffer range of"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("binding"), std::string::npos) << msg;
    // A size that fits still runs.
    std::vector<float> host{0.1f, 0.2f, 0.3f, 0.4f}, got(4);
    stream << x.copy_from(host.data()) << tapes(x, out).dispatch(4) << out.copy_to(got.data()) << synchronize();
    for (float g : got) EXPECT_TRUE(std::isfinite(g) && g != 0.0f) << g;
}

TEST_F(DispatchErrors, OneBufferStoredThroughOneParameterAndBoundToAnotherIsRefused) {
    // Read through argument 0 and stored through argument 1: refused when the invocation is made, naming both.
    EXPECT_TRUE(throws_error([&] { (void)shader(x, x, 2.0f); },
                             "kernel 'scale_kernel' is given one buffer as argument 0 and argument 1, and "
                             "writes argument 1 with plain stores"));
    // A view of the same buffer is the same memory.
    const Buffer<float> view(x.impl(), 2);
    EXPECT_NE(error_of([&] { (void)shader(view, x, 2.0f); }).find("is given one buffer as"), std::string::npos);
    // An image read through one parameter and stored through another: the same.
    Kernel2D copy = [](ImageFloat src, ImageFloat dst) noexcept {
        dst.write(dispatch_id().xy(), src.read(dispatch_id().xy()) * 2.0f);
    };
    auto copies = device.compile(copy, {.name = "image_copy"});
    auto img = device.create_image<float>(PixelFormat::RGBA32F, 2, 2);
    EXPECT_NE(error_of([&] { (void)copies(img, img); })
                  .find("kernel 'image_copy' is given one image as argument 0 and argument 1, and writes argument 1"),
              std::string::npos);
    // Two buffers run.
    std::vector<float> host{1, 2, 3, 4}, got(4);
    stream << x.copy_from(host.data()) << shader(x, out, 2.0f).dispatch(4) << out.copy_to(got.data()) << synchronize();
    EXPECT_EQ(got, (std::vector<float>{2, 4, 6, 8}));
}

TEST_F(DispatchErrors, OneBufferWrittenThroughTwoViewsRunsWhereTheKernelDeclaresThemDisjoint) {
    // Floats 0..3 as one float4 (doubled), floats 4 and 5 one by one (plus 10): disjoint elements of one buffer.
    Kernel1D k = [](BufferFloat4 quads, BufferFloat floats) noexcept {
        $if (dispatch_id().x == 0u) { quads.write(0u, quads.read(0u) * 2.0f); };
        $if (dispatch_id().x > 0u) {
            UInt i = 3u + dispatch_id().x;
            floats.write(i, floats.read(i) + 10.0f);
        };
    };
    auto b = device.create_buffer<float>(8);
    std::vector<float> host{1, 2, 3, 4, 5, 6, 7, 8}, got(8);
    // Undeclared, it is the hazard of the test above.
    auto plain = device.compile(k, {.name = "two_views"});
    EXPECT_TRUE(throws_error([&] { (void)plain(b.as<float4>(), b); },
                             "kernel 'two_views' is given one buffer as argument 0 and argument 1, and writes"));
    auto declared = device.compile(k, {.name = "two_views", .disjoint_views = true});
    stream << b.copy_from(host.data()) << declared(b.as<float4>(), b).dispatch(3) << b.copy_to(got.data())
           << synchronize();
    EXPECT_EQ(got, (std::vector<float>{2, 4, 6, 8, 15, 16, 7, 8}));
}

TEST_F(DispatchErrors, OneBufferAddedToByAtomicsThroughTwoParametersRuns) {
    // Atomics through both bindings (what a scatter into its own input does) are coherent: allowed, and exact.
    Kernel1D k = [](BufferFloat a, BufferFloat b) noexcept {
        a.atomic(0u).fetch_add(1.0f);
        b.atomic(1u).fetch_add(2.0f);
    };
    auto both = device.compile(k, {.name = "two_atomics"});
    std::vector<float> zero(4, 0.0f), got(4);
    stream << x.copy_from(zero.data()) << both(x, x).dispatch(100) << x.copy_to(got.data()) << synchronize();
    EXPECT_EQ(got, (std::vector<float>{100, 200, 0, 0}));
}

TEST_F(DispatchErrors, ADiffBuffersGradientStoredThroughAnotherParameterIsRefused) {
    // The gradient buffer is a hidden binding, added to by the generated atomics; storing into it through a
    // parameter of its own is the same hazard.
    Kernel1D k = [](DiffBufferFloat p, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        $autodiff {
            Float v = p.read(i);
            backward(v * v);
        };
        out.write(i, 1.0f);
    };
    auto grads = device.compile(k, {.name = "grad_and_store"});
    auto p = device.create_diff_buffer<float>(4);
    EXPECT_TRUE(throws_error([&] { (void)grads(p, p.grad); },
                             "kernel 'grad_and_store' is given one buffer as argument 1 and the gradient of "
                             "argument 0, and writes argument 1 with plain stores"));
    // Its values too: read through argument 0, stored through argument 1.
    EXPECT_NE(error_of([&] { (void)grads(p, p.value); })
                  .find("is given one buffer as argument 0 and argument 1, and writes argument 1"),
              std::string::npos);
    // Apart, the gradient is 2 p.
    std::vector<float> host{1, 2, 3, 4}, got(4);
    stream << p.value.copy_from(host.data()) << p.zero_grad() << grads(p, out).dispatch(4) << p.grad.copy_to(got.data())
           << synchronize();
    EXPECT_EQ(got, (std::vector<float>{2, 4, 6, 8}));
}

} // namespace adjoint::test
