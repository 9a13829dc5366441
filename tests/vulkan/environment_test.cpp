// What the environment can break: no Vulkan driver, validation asked for but not loadable, ADJOINT_VALIDATION.
#include "vulkan/vk_runtime.h"

#include <adjoint/core/error.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

using namespace adjoint::vk;

namespace {

// Sets (or, with no value, unsets) an environment variable for the life of the object. The Vulkan loader
// reads its variables again at every instance creation, so this works in-process.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) setenv(name, value->c_str(), 1);
        else unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

std::string error_of_create(const ContextOptions& options) {
    try {
        Context::create(options);
    } catch (const adjoint::Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "Context::create did not throw";
    return {};
}

} // namespace

TEST(Environment, NoDriverSaysSoAndHowToInstallLavapipe) {
    ScopedEnv drivers("VK_DRIVER_FILES", "/nonexistent/adjoint-no-driver.json");
    ScopedEnv icds("VK_ICD_FILENAMES", "/nonexistent/adjoint-no-driver.json");
    std::string msg = error_of_create({});
    EXPECT_NE(msg.find("no Vulkan driver found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install mesa-vulkan-drivers"), std::string::npos) << msg;
    EXPECT_NE(msg.find("VK_DRIVER_FILES='/nonexistent/adjoint-no-driver.json' limits the Vulkan loader"),
              std::string::npos) << msg;
}

TEST(Environment, ValidationThatCannotBeLoadedIsAnError) {
    // The loader looks for explicit layers only where VK_LAYER_PATH says: nowhere useful here.
    ScopedEnv layers("VK_LAYER_PATH", "/nonexistent/adjoint-no-layers");
    ContextOptions options;
    options.validation = true;
    std::string msg = error_of_create(options);
    EXPECT_NE(msg.find("ADJOINT_VALIDATION asks for the Vulkan validation layer, but VK_LAYER_KHRONOS_validation is "
                       "not installed"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install vulkan-validationlayers"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ADJOINT_VALIDATION=0"), std::string::npos) << msg;
    // Without validation the same environment works.
    EXPECT_NO_THROW(Context::create({}));
}

TEST(Environment, AdjointValidationZeroMeansOff) {
    {
        ScopedEnv v("ADJOINT_VALIDATION", "0");
        EXPECT_FALSE(ContextOptions::from_environment().validation);
        EXPECT_FALSE(Context::create(ContextOptions::from_environment())->validation_enabled());
    }
    for (const char* off : std::initializer_list<const char*>{"", nullptr}) {
        ScopedEnv v("ADJOINT_VALIDATION", off ? std::optional<std::string>(off) : std::nullopt);
        EXPECT_FALSE(ContextOptions::from_environment().validation) << (off ? "empty" : "unset");
    }
    ScopedEnv v("ADJOINT_VALIDATION", "1");
    EXPECT_TRUE(ContextOptions::from_environment().validation);
    ScopedEnv d("ADJOINT_DEVICE", "llvmpipe");
    EXPECT_EQ(ContextOptions::from_environment().device_override, "llvmpipe");
}
