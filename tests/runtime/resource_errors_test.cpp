// Empty resources and resources of another Device, as kernel arguments and in copies: Errors by name.
#include "support/device_fixture.h"
#include "support/error_text.h"

namespace adjoint::test {

namespace {

// A second device for the whole program (creating one is the cost of a Vulkan instance).
Device& other_device() {
    static Context ctx;
    static Device device = ctx.create_device();
    return device;
}

} // namespace

class ResourceErrors : public DeviceTest {
protected:
    Kernel1D<void(BufferFloat, BufferFloat, Float)> kernel = [](BufferFloat x, BufferFloat out, Float scale) noexcept {
        auto i = dispatch_id().x;
        out.write(i, x.read(i) * scale);
    };
    Kernel2D<void(ImageFloat, BufferFloat)> image_kernel = [](ImageFloat img, BufferFloat out) noexcept {
        auto p = dispatch_id().xy();
        out.write(p.x, img.read(p).x);
    };
    Shader<1> shader = device.compile(kernel, ShaderOptions{"scale_kernel"});
    Shader<2> image_shader = device.compile(image_kernel, ShaderOptions{"image_kernel"});
    Buffer<float> x = device.create_buffer<float>(4);
    Buffer<float> out = device.create_buffer<float>(4);

    void TearDown() override {
        DeviceTest::TearDown();
        EXPECT_EQ(other_device().validation_message_count(), 0u);
    }
};

TEST_F(ResourceErrors, EmptyBufferArgumentIsNamed) {
    Buffer<float> empty;
    EXPECT_TRUE(throws_error(
        [&] { (void)shader(x, empty, 1.0f); },
        "argument 1 of kernel 'scale_kernel' is an empty Buffer (default-constructed or moved-from)"));
}

TEST_F(ResourceErrors, BufferOfAnotherDeviceIsNamed) {
    auto foreign = other_device().create_buffer<float>(4);
    EXPECT_TRUE(throws_error([&] { (void)shader(foreign, out, 1.0f); },
                             "argument 0 of kernel 'scale_kernel' is a buffer of another Device"));
}

TEST_F(ResourceErrors, EmptyImageAndImageOfAnotherDeviceAreNamed) {
    Image<float> empty;
    EXPECT_EQ(empty.width(), 0u);
    EXPECT_EQ(empty.height(), 0u);
    EXPECT_TRUE(throws_error(
        [&] { (void)image_shader(empty, out); },
        "argument 0 of kernel 'image_kernel' is an empty Image (default-constructed or moved-from)"));
    auto foreign = other_device().create_image<float>(PixelFormat::RGBA32F, 2, 2);
    EXPECT_TRUE(throws_error([&] { (void)image_shader(foreign, out); },
                             "argument 0 of kernel 'image_kernel' is an image of another Device"));
}

TEST_F(ResourceErrors, CopiesOfEmptyResourcesAreErrors) {
    Buffer<float> empty;
    float host[4] = {};
    EXPECT_TRUE(throws_error([&] { stream << empty.copy_from(host); }, "copy_from of an empty Buffer"));
    EXPECT_TRUE(throws_error([&] { stream << empty.copy_to(host); }, "copy_to of an empty Buffer"));
    EXPECT_TRUE(throws_error([&] { stream << empty.fill_zero(); }, "fill_zero of an empty Buffer"));
    Image<float> empty_image;
    EXPECT_TRUE(throws_error([&] { stream << empty_image.copy_to(host); }, "copy_to of an empty Image"));
    EXPECT_TRUE(throws_error([&] { stream << empty_image.copy_from(host); }, "copy_from of an empty Image"));
    stream << synchronize();
}

TEST_F(ResourceErrors, DeviceCopiesBetweenBuffersNameWhatIsWrong) {
    auto longer = device.create_buffer<float>(5);
    EXPECT_TRUE(throws_error([&] { stream << x.copy_to(longer); },
                             "copy_to of a buffer of 4 elements into one of 5: the sizes must match"));
    EXPECT_TRUE(throws_error([&] { stream << x.copy_to(x); }, "copy_to of a buffer into itself"));
    Buffer<float> empty;
    EXPECT_TRUE(throws_error([&] { stream << empty.copy_to(x); }, "copy_to of an empty Buffer"));
    EXPECT_TRUE(
        throws_error([&] { stream << x.copy_to(empty); }, "copy_to (its destination) of an empty Buffer"));
    auto foreign = other_device().create_buffer<float>(4);
    EXPECT_TRUE(throws_error([&] { stream << x.copy_to(foreign); },
                             "copy_to on a stream of another Device than the resource's"));
    // Ranges: past the source, past the destination, and within one buffer (one resource to the stream).
    EXPECT_TRUE(throws_error([&] { stream << x.copy_to(longer, 2, 0, 3); },
                             "copy_to of elements [2, 5) of a buffer of 4 elements: out of range"));
    EXPECT_TRUE(
        throws_error([&] { stream << x.copy_to(longer, 0, 3, 3); },
                     "copy_to (its destination) of elements [3, 6) of a buffer of 5 elements: out of range"));
    EXPECT_TRUE(throws_error([&] { stream << x.copy_to(x, 0, 2, 2); }, "copy_to of a buffer into itself"));
    stream << synchronize();
}

TEST_F(ResourceErrors, CopiesAndDispatchesOnAStreamOfAnotherDeviceAreErrors) {
    auto foreign = other_device().create_buffer<float>(4);
    float host[4] = {1, 2, 3, 4};
    EXPECT_TRUE(throws_error([&] { stream << foreign.copy_from(host); },
                             "copy_from on a stream of another Device than the resource's"));
    EXPECT_TRUE(throws_error([&] { stream << foreign.copy_to(host); },
                             "copy_to on a stream of another Device than the resource's"));
    Stream foreign_stream = other_device().create_stream();
    EXPECT_TRUE(
        throws_error([&] { foreign_stream << shader(x, out, 1.0f).dispatch(4); },
                     "kernel 'scale_kernel' was compiled by another Device than the one of the stream"));
    // Both streams still work afterwards.
    float got[4] = {};
    stream << x.copy_from(host) << shader(x, out, 2.0f).dispatch(4) << out.copy_to(got) << synchronize();
    EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{2, 4, 6, 8}));
    float back[4] = {};
    foreign_stream << foreign.copy_from(host) << foreign.copy_to(back) << synchronize();
    EXPECT_EQ(std::vector<float>(back, back + 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(ResourceErrors, BufferLargerThanOneBindingIsNamed) {
    // lavapipe's storage-buffer range is 128 MiB; one float more does not fit in one binding.
    if (device.name().find("llvmpipe") == std::string::npos) GTEST_SKIP() << "range checked on lavapipe only";
    auto big = device.create_buffer<float>((size_t(128) << 20) / 4 + 1);
    EXPECT_TRUE(throws_error([&] { (void)shader(big, out, 1.0f); },
                             "argument 0 of kernel 'scale_kernel' is a buffer of 134217732 bytes, over the "
                             "device's storage-buffer range of 134217728 bytes"));
}

// ---- Copies of part of a buffer ----------------------------------------------------------------------

class PartialCopies : public DeviceTest {};

TEST_F(PartialCopies, ReadOneElementAndWriteARange) {
    std::vector<float> host{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    auto buf = device.create_buffer<float>(host.size());
    float one = -1;
    const float patch[3] = {30, 40, 50};
    std::vector<float> all(host.size());
    stream << buf.copy_from(host.data()) << buf.copy_to(&one, 7, 1) << buf.copy_from(patch, 3, 3)
           << buf.copy_to(all.data()) << synchronize();
    EXPECT_EQ(one, 7.0f);
    EXPECT_EQ(all, (std::vector<float>{0, 1, 2, 30, 40, 50, 6, 7, 8, 9}));
    // The last element alone, and an empty range at the end.
    float last = -1;
    stream << buf.copy_to(&last, 9, 1) << buf.copy_to(nullptr, 10, 0) << buf.copy_from(nullptr, 10, 0) << synchronize();
    EXPECT_EQ(last, 9.0f);
}

TEST_F(PartialCopies, OffsetsCountInElementsOfTheBuffersType) {
    // float3 takes 16 bytes: element 2 starts at byte 32.
    std::vector<float3> host{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}};
    auto buf = device.create_buffer<float3>(host.size());
    float3 got[2];
    const float3 repl(-1, -2, -3);
    std::vector<float3> all(host.size());
    stream << buf.copy_from(host.data()) << buf.copy_to(got, 2, 2) << buf.copy_from(&repl, 1, 1) << buf.copy_to(all.data())
           << synchronize();
    EXPECT_EQ(got[0], float3(7, 8, 9));
    EXPECT_EQ(got[1], float3(10, 11, 12));
    EXPECT_EQ(all[1], repl);
    EXPECT_EQ(all[0], host[0]);
    EXPECT_EQ(all[3], host[3]);
}

TEST_F(PartialCopies, RangesPastTheEndAreErrors) {
    auto buf = device.create_buffer<float>(10);
    float tmp[16] = {};
    EXPECT_TRUE(throws_error([&] { stream << buf.copy_to(tmp, 8, 4); },
                             "copy_to of elements [8, 12) of a buffer of 10 elements: out of range"));
    EXPECT_TRUE(throws_error([&] { stream << buf.copy_from(tmp, 11, 0); },
                             "copy_from of elements [11, 11) of a buffer of 10 elements: out of range"));
    // A count that would wrap offset + count around is caught too.
    EXPECT_TRUE(throws_error(
        [&] { stream << buf.copy_to(tmp, 2, SIZE_MAX); },
        "copy_to of 18446744073709551615 elements from element 2 of a buffer of 10 elements: out of range"));
    Buffer<float> empty;
    EXPECT_TRUE(throws_error([&] { stream << empty.copy_to(tmp, 0, 1); }, "copy_to of an empty Buffer"));
}

} // namespace adjoint::test
