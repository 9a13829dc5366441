// A kernel that needs what the device lacks (subgroup operations, uint64, 64-bit atomics) is refused when
// it is emitted, naming the kernel, the C++ line and the missing feature; the golden tests emit for a
// device that has everything.
#include <adjoint/adjoint.h>
#include <adjoint/pipeline/lower.h>
#include <adjoint/codegen/glsl.h>

#include <gtest/gtest.h>

namespace adjoint::test {

namespace {

std::string at(int line) { return "codegen/device_features_test.cpp:" + std::to_string(line); }

template <typename K>
std::string emit_error(K& kernel, const codegen::GlslOptions& options) {
    kernel.set_name("needy");
    try {
        codegen::emit_glsl(*pipeline::lower(*kernel.function()).function, options);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(DeviceFeatures, SubgroupOperationsTheDeviceLacks) {
    int line = 0;
    Kernel1D k = [&](BufferFloat x) noexcept {
        UInt i = dispatch_id().x;
        line = __LINE__; Float s = subgroup_add(x.read(i));
        x.write(i, s);
    };
    codegen::GlslOptions basic_only;
    basic_only.subgroup_features = codegen::kSubgroupBasic | codegen::kSubgroupVote;
    std::string e = emit_error(k, basic_only);
    EXPECT_NE(e.find("kernel 'needy': subgroup_add at " + at(line)), std::string::npos) << e;
    EXPECT_NE(e.find("subgroup arithmetic operations in compute shaders"), std::string::npos) << e;
    Kernel1D size_only = [&](BufferUInt x) noexcept {
        line = __LINE__; x.write(dispatch_id().x, subgroup_size());
    };
    codegen::GlslOptions none;
    none.subgroup_features = 0;
    e = emit_error(size_only, none);
    EXPECT_NE(e.find("subgroup_size at " + at(line)), std::string::npos) << e;
    EXPECT_NE(e.find("subgroup basic operations"), std::string::npos) << e;
}

TEST(DeviceFeatures, Uint64AndItsAtomicsTheDeviceLacks) {
    int line = 0;
    Kernel1D k = [&](BufferUInt64 z, BufferUInt pixel) noexcept {
        UInt i = dispatch_id().x;
        line = __LINE__; z.atomic(pixel.read(i)).fetch_min(cast<uint64_t>(i));
    };
    codegen::GlslOptions no_atomics;
    no_atomics.int64_atomics = false;
    std::string e = emit_error(k, no_atomics);
    EXPECT_NE(e.find("a uint64 atomic on a buffer at " + at(line)), std::string::npos) << e;
    EXPECT_NE(e.find("shaderBufferInt64Atomics"), std::string::npos) << e;
    codegen::GlslOptions no_int64;
    no_int64.int64 = false;
    e = emit_error(k, no_int64);
    EXPECT_NE(e.find("needs the device feature shaderInt64"), std::string::npos) << e;

    Kernel1D shared = [&](BufferUInt64 out) noexcept {
        Shared<uint64_t> depth(256);
        depth.write(thread_id().x, ~0ull);
        line = __LINE__; depth.atomic(0u).fetch_min(cast<uint64_t>(dispatch_id().x));
        out.write(dispatch_id().x, depth.read(0u));
    };
    codegen::GlslOptions no_shared_atomics;
    no_shared_atomics.shared_int64_atomics = false;
    e = emit_error(shared, no_shared_atomics);
    EXPECT_NE(e.find("a uint64 atomic on shared memory at " + at(line)), std::string::npos) << e;
    EXPECT_NE(e.find("shaderSharedInt64Atomics"), std::string::npos) << e;
}

} // namespace adjoint::test
