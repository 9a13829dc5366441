// Host options: DeviceOptions read from the environment once (its defaults otherwise), and the device list.
#include <adjoint/adjoint.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace adjoint::test {

namespace {

// Sets (or unsets) an environment variable for a scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value->c_str(), 1);
        else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

// The test environment's validation setting, as explicit options (any validation message fails a test).
DeviceOptions defaults() {
    DeviceOptions o;
    o.validation = DeviceOptions::from_environment().validation;
    return o;
}

} // namespace

TEST(DeviceOptions, FromEnvironmentReadsEachVariable) {
    {
        ScopedEnv d("ADJOINT_DEVICE", std::nullopt), v("ADJOINT_VALIDATION", std::nullopt);
        ScopedEnv f("ADJOINT_NO_FLOAT_ATOMICS", std::nullopt), l("ADJOINT_LOOP_LIMIT", std::nullopt);
        DeviceOptions o = DeviceOptions::from_environment();
        EXPECT_EQ(o.device, "");
        EXPECT_FALSE(o.validation);
        EXPECT_TRUE(o.float_atomics);
        EXPECT_FALSE(o.loop_limit.has_value());
    }
    ScopedEnv d("ADJOINT_DEVICE", "llvm"), v("ADJOINT_VALIDATION", "1");
    ScopedEnv f("ADJOINT_NO_FLOAT_ATOMICS", "1"), l("ADJOINT_LOOP_LIMIT", "0");
    DeviceOptions o = DeviceOptions::from_environment();
    EXPECT_EQ(o.device, "llvm");
    EXPECT_TRUE(o.validation);
    EXPECT_FALSE(o.float_atomics);
    ASSERT_TRUE(o.loop_limit.has_value());
    EXPECT_EQ(*o.loop_limit, 0u);
    ScopedEnv off("ADJOINT_NO_FLOAT_ATOMICS", "0");
    EXPECT_TRUE(DeviceOptions::from_environment().float_atomics);
}

TEST(DeviceOptions, ExplicitOptionsDoNotReadTheEnvironment) {
    ScopedEnv d("ADJOINT_DEVICE", "no-such-device");
    Context ctx;
    try {
        ctx.create_device();   // the environment's options: nothing matches
        FAIL() << "expected an Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("ADJOINT_DEVICE=no-such-device does not match"), std::string::npos)
            << e.what();
    }
    Device device = ctx.create_device(defaults());   // explicit options: the best ranked device
    EXPECT_FALSE(device.name().empty());
}

TEST(DeviceOptions, FloatAtomicsOffWritesCompareAndSwapLoops) {
    Kernel1D k = [](BufferFloat sum, BufferFloat x) noexcept {
        sum.atomic(0u).fetch_add(x.read(dispatch_id().x));
    };
    Context ctx;
    DeviceOptions o = defaults();
    o.float_atomics = false;
    Device cas = ctx.create_device(o);
    auto shader = cas.compile(k);
    EXPECT_NE(shader.glsl().find("atomicCompSwap"), std::string::npos) << shader.glsl();
    EXPECT_EQ(shader.glsl().find("atomicAdd("), std::string::npos) << shader.glsl();
    // And it runs: 100 ones sum to 100.
    auto sum = cas.create_buffer<float>(1);
    auto x = cas.create_buffer<float>(100);
    std::vector<float> ones(100, 1.0f), out(1, -1.0f);
    float zero = 0.0f;
    Stream stream = cas.create_stream();
    stream << sum.copy_from(&zero) << x.copy_from(ones.data()) << shader(sum, x).dispatch(100)
           << sum.copy_to(out.data()) << synchronize();
    EXPECT_EQ(out[0], 100.0f);
}

TEST(DeviceOptions, LoopLimitZeroTurnsTheCheckOff) {
    // 100,000 iterations in one thread: past lavapipe's budget. With the check (the default there) the
    // synchronize reports the loop; with loop_limit 0 the loop stops silently at the budget.
    Kernel1D k = [](BufferUInt out) noexcept {
        UInt s = 0u;
        $for (j, 100000u) { s += 1u; };
        out.write(0u, s);
    };
    Context ctx;
    DeviceOptions o = defaults();
    o.loop_limit = 0u;
    Device device = ctx.create_device(o);
    auto out = device.create_buffer<uint32_t>(1);
    std::vector<uint32_t> host(1);
    Stream stream = device.create_stream();
    EXPECT_NO_THROW(stream << device.compile(k)(out).dispatch(1) << out.copy_to(host.data()) << synchronize());
    EXPECT_GT(host[0], 0u);
    EXPECT_EQ(device.compile(k).glsl().find("adjoint_status"), std::string::npos);   // no check emitted
}

TEST(DeviceOptions, ListDevicesNamesEachPhysicalDevice) {
    Context ctx;
    auto devices = ctx.list_devices();
    ASSERT_FALSE(devices.empty());
    for (size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(devices[i].index, i);
        EXPECT_FALSE(devices[i].name.empty());
        const std::string& t = devices[i].type;
        EXPECT_TRUE(t == "discrete" || t == "integrated" || t == "virtual" || t == "cpu" || t == "other") << t;
    }
    // Each usable entry is what DeviceOptions::device = its index gives.
    Device chosen = ctx.create_device(defaults());
    bool listed = false;
    for (const auto& d : devices) listed = listed || d.name == chosen.name();
    EXPECT_TRUE(listed) << chosen.name();
    DeviceOptions by_index = defaults();
    for (const auto& d : devices) {
        if (d.name != chosen.name()) continue;
        by_index.device = std::to_string(d.index);
        EXPECT_EQ(ctx.create_device(by_index).name(), d.name);
        if (d.name.find("llvmpipe") != std::string::npos) {
            EXPECT_EQ(d.type, "cpu");
        }
    }
}

} // namespace adjoint::test
