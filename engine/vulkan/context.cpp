// The Vulkan context: instance, optional validation messenger, device enumeration and the logical device.
#include "vulkan/vk_internal.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace adjoint::vk {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool validation_layer_available() {
    uint32_t n = 0;
    VK_CHECK(vkEnumerateInstanceLayerProperties(&n, nullptr));
    std::vector<VkLayerProperties> layers(n);
    VK_CHECK(vkEnumerateInstanceLayerProperties(&n, layers.data()));
    return std::any_of(layers.begin(), layers.end(), [](const VkLayerProperties& l) {
        return std::strcmp(l.layerName, kValidationLayer) == 0;
    });
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                     void* user) {
    auto* impl = static_cast<Context::Impl*>(user);
    const char* level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
    std::string message = std::string(level) + ": " + (data->pMessage ? data->pMessage : "");
    std::lock_guard lock(impl->messages_mutex);
    impl->messages.push_back(std::move(message));
    return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(Context::Impl* impl) {
    VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    // Performance advice is left out: it flags the GENERAL image layout that streams keep on purpose.
    info.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    info.pfnUserCallback = on_validation_message;
    info.pUserData = impl;
    return info;
}

// The Vulkan loader reports a missing driver as VK_ERROR_INCOMPATIBLE_DRIVER (or as no devices at all),
// which tells a user nothing about what to install.
[[noreturn]] void fail_no_driver(const std::string& what) {
    std::string hint;
    for (const char* var : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"})
        if (const char* v = std::getenv(var))
            hint += std::string("; note that ") + var + "='" + v +
                    "' limits the Vulkan loader to the driver manifests it names";
    fail("no Vulkan driver found (", what,
         "). Adjoint needs one; without a GPU, install Mesa's lavapipe, a CPU Vulkan driver: "
         "apt-get install mesa-vulkan-drivers",
         hint);
}

[[noreturn]] void fail_no_validation(const std::string& what) {
    fail("ADJOINT_VALIDATION asks for the Vulkan validation layer, but ", what,
         ". Install it (apt-get install vulkan-validationlayers), or set ADJOINT_VALIDATION=0 to run without it");
}

void create_instance(Context::Impl& impl, bool want_validation, const std::vector<std::string>& wanted) {
    uint32_t loader_version = VK_API_VERSION_1_0;
    VK_CHECK(vkEnumerateInstanceVersion(&loader_version));
    if (loader_version < VK_API_VERSION_1_1)
        fail("the Vulkan loader supports only Vulkan ", VK_API_VERSION_MAJOR(loader_version), ".",
             VK_API_VERSION_MINOR(loader_version), "; Adjoint needs 1.1 or newer");

    uint32_t n = 0;
    VK_CHECK(vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr));
    std::vector<VkExtensionProperties> available(n);
    VK_CHECK(vkEnumerateInstanceExtensionProperties(nullptr, &n, available.data()));

    // Validation that was asked for and is missing fails: a test run that silently lost its validation
    // would pass while checking nothing.
    if (want_validation) {
        if (!validation_layer_available())
            fail_no_validation(std::string(kValidationLayer) + " is not installed where the Vulkan loader looks");
        if (!has_extension(available, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
            fail_no_validation(std::string("the instance extension ") + VK_EXT_DEBUG_UTILS_EXTENSION_NAME +
                               " it reports through is not available");
        impl.validation = true;
    }

    std::vector<const char*> extensions, layers;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    if (has_extension(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
        info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
    // Chained into instance creation so messages from vkCreateInstance/vkDestroyInstance are counted too.
    VkDebugUtilsMessengerCreateInfoEXT messenger = messenger_info(&impl);
    if (impl.validation) {
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        layers.push_back(kValidationLayer);
        info.pNext = &messenger;
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "adjoint";
    app.pEngineName = "adjoint";
    app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_2);
    impl.instance_api_version = app.apiVersion;
    info.pApplicationInfo = &app;
    for (const auto& e : wanted) {
        if (!has_extension(available, e.c_str()))
            fail("the instance extension ", e, " that the caller asked for is not available");
        if (std::none_of(extensions.begin(), extensions.end(), [&](const char* x) { return e == x; }))
            extensions.push_back(e.c_str());
    }
    info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    info.enabledLayerCount = static_cast<uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    VkResult created = vkCreateInstance(&info, nullptr, &impl.instance);
    if (created == VK_ERROR_INCOMPATIBLE_DRIVER)
        fail_no_driver("vkCreateInstance returned VK_ERROR_INCOMPATIBLE_DRIVER");
    if (created == VK_ERROR_LAYER_NOT_PRESENT && impl.validation)
        fail_no_validation(std::string(kValidationLayer) + " is listed but could not be loaded (vkCreateInstance "
                           "returned VK_ERROR_LAYER_NOT_PRESENT)");
    VK_CHECK(created);

    if (impl.validation) {
        auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(impl.instance, "vkCreateDebugUtilsMessengerEXT"));
        if (!create)
            fail("vkGetInstanceProcAddr(vkCreateDebugUtilsMessengerEXT) returned null");
        VK_CHECK(create(impl.instance, &messenger, nullptr, &impl.messenger));
    }
}

void create_device(Context::Impl& impl, const ContextExtras& extras) {
    impl.queue_family = impl.info.queue_family;
    vkGetPhysicalDeviceMemoryProperties(impl.physical, &impl.memory);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(impl.physical, &props);
    impl.limits = props.limits;
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(impl.physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    vkGetPhysicalDeviceQueueFamilyProperties(impl.physical, &families, family.data());
    if (impl.queue_family < families) impl.profile.timestamp_bits = family[impl.queue_family].timestampValidBits;
    impl.profile.timestamp_period_ns = double(props.limits.timestampPeriod);

    auto exts = device_extensions(impl.physical);
    std::vector<const char*> enabled;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
    const DeviceInfo& d = impl.info;
    if (d.float_atomic_add || d.shared_float_atomic_add) {
        enabled.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
        atomic.shaderBufferFloat32Atomics = d.float_atomic_add;
        atomic.shaderBufferFloat32AtomicAdd = d.float_atomic_add;
        atomic.shaderSharedFloat32Atomics = d.shared_float_atomic_add;
        atomic.shaderSharedFloat32AtomicAdd = d.shared_float_atomic_add;
        atomic.pNext = const_cast<void*>(info.pNext);
        info.pNext = &atomic;
    }
    if (d.float_atomic_min_max || d.shared_float_atomic_min_max) {
        enabled.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
        atomic2.shaderBufferFloat32AtomicMinMax = d.float_atomic_min_max;
        atomic2.shaderSharedFloat32AtomicMinMax = d.shared_float_atomic_min_max;
        atomic2.pNext = const_cast<void*>(info.pNext);
        info.pNext = &atomic2;
    }
    // uint64 values and their atomics (packed depth and id for rasterization, say).
    VkPhysicalDeviceShaderAtomicInt64FeaturesKHR atomic64{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES_KHR};
    if (d.int64_atomics || d.shared_int64_atomics) {
        enabled.push_back(VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME);
        atomic64.shaderBufferInt64Atomics = d.int64_atomics;
        atomic64.shaderSharedInt64Atomics = d.shared_int64_atomics;
        atomic64.pNext = const_cast<void*>(info.pNext);
        info.pNext = &atomic64;
    }
    VkPhysicalDeviceFeatures core{};
    core.shaderInt64 = d.int64;
    info.pEnabledFeatures = &core;
    // The spec requires enabling the portability subset wherever a device advertises it.
    if (has_extension(exts, "VK_KHR_portability_subset"))
        enabled.push_back("VK_KHR_portability_subset");
    for (const auto& e : extras.device_extensions)
        if (std::none_of(enabled.begin(), enabled.end(), [&](const char* x) { return e == x; }))
            enabled.push_back(e.c_str());

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueFamilyIndex = impl.queue_family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    info.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
    info.ppEnabledExtensionNames = enabled.data();
    VK_CHECK(vkCreateDevice(impl.physical, &info, nullptr, &impl.device));
    vkGetDeviceQueue(impl.device, impl.queue_family, 0, &impl.queue);

    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool.queueFamilyIndex = impl.queue_family;
    VK_CHECK(vkCreateCommandPool(impl.device, &pool, nullptr, &impl.once_pool));
}

} // namespace

Context::Impl::~Impl() {
    if (device) {
        vkDeviceWaitIdle(device);
        buffer_pool.clear();   // before the device they belong to
        if (once_pool)
            vkDestroyCommandPool(device, once_pool, nullptr);
        vkDestroyDevice(device, nullptr);
    }
    if (on_instance_destroy && instance)
        on_instance_destroy(instance);
    if (messenger) {
        auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
        if (destroy)
            destroy(instance, messenger, nullptr);
    }
    if (instance)
        vkDestroyInstance(instance, nullptr);
}

uint32_t Context::Impl::find_memory(uint32_t type_bits, VkMemoryPropertyFlags required,
                                    VkMemoryPropertyFlags preferred, size_t bytes) const {
    std::optional<uint32_t> fallback;
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
        VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
        if (!(type_bits & (1u << i)) || (flags & required) != required)
            continue;
        if ((flags & preferred) == preferred)
            return i;
        if (!fallback)
            fallback = i;
    }
    if (!fallback)
        fail("no Vulkan memory type with properties 0x", std::hex, required, std::dec, " for ", bytes,
             " bytes on ", info.name);
    return *fallback;
}

void Context::Impl::submit(const VkSubmitInfo& info, VkFence fence) {
    std::lock_guard lock(queue_mutex);
    VK_CHECK(vkQueueSubmit(queue, 1, &info, fence));
}

void Context::Impl::wait_queue_idle() {
    std::lock_guard lock(queue_mutex);
    vkQueueWaitIdle(queue);
}

void Context::Impl::run_once(const std::function<void(VkCommandBuffer)>& record) {
    // One lock covers the one-off pool (externally synchronized) and the queue; this is rare setup work.
    std::lock_guard lock(queue_mutex);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = once_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd;
    VK_CHECK(vkAllocateCommandBuffers(device, &alloc, &cmd));
    struct Free {
        VkDevice d;
        VkCommandPool p;
        VkCommandBuffer c;
        ~Free() { vkFreeCommandBuffers(d, p, 1, &c); }
    } free_on_exit{device, once_pool, cmd};
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VK_CHECK(vkBeginCommandBuffer(cmd, &begin));
    record(cmd);
    VK_CHECK(vkEndCommandBuffer(cmd));
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    VK_CHECK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
    VK_CHECK(vkQueueWaitIdle(queue));
}

uint64_t next_resource_id() {
    static std::atomic<uint64_t> next{1};
    return next++;
}

std::vector<DeviceInfo> enumerate_devices() {
    Context::Impl impl;   // its destructor destroys the instance
    create_instance(impl, false, {});
    uint32_t n = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(impl.instance, &n, nullptr));
    if (n == 0)
        fail_no_driver("the Vulkan loader found no physical device");
    std::vector<VkPhysicalDevice> physical(n);
    VK_CHECK(vkEnumeratePhysicalDevices(impl.instance, &n, physical.data()));
    std::vector<DeviceInfo> devices;
    for (uint32_t i = 0; i < n; ++i)
        devices.push_back(describe(physical[i], i));
    return devices;
}

std::shared_ptr<Context> Context::create(const ContextOptions& options) {
    auto impl = std::make_unique<Impl>();
    create_instance(*impl, options.validation, options.extras.instance_extensions);
    impl->on_instance_destroy = options.extras.on_instance_destroy;
    if (options.extras.on_instance)
        options.extras.on_instance(impl->instance);

    uint32_t n = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(impl->instance, &n, nullptr));
    if (n == 0)
        fail_no_driver("the Vulkan loader found no physical device");
    std::vector<VkPhysicalDevice> physical(n);
    VK_CHECK(vkEnumeratePhysicalDevices(impl->instance, &n, physical.data()));
    for (uint32_t i = 0; i < n; ++i) {
        impl->devices.push_back(describe(physical[i], i));
        check_extras(impl->devices.back(), physical[i], impl->instance, options.extras);
    }

    impl->choice = choose_device(impl->devices, options.device_override);
    if (!impl->choice.chosen) {
        std::string lines;
        for (const auto& line : impl->choice.report)
            lines += "\n  " + line;
        fail("no usable Vulkan device:", lines);
    }
    impl->info = impl->devices[*impl->choice.chosen];
    impl->physical = physical[*impl->choice.chosen];
    create_device(*impl, options.extras);
    return std::shared_ptr<Context>(new Context(std::move(impl)));
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;
const DeviceInfo& Context::device_info() const { return impl_->info; }
std::vector<DeviceInfo> Context::all_devices() const { return impl_->devices; }
const DeviceChoice& Context::choice() const { return impl_->choice; }
uint64_t Context::validation_message_count() const {
    std::lock_guard lock(impl_->messages_mutex);
    return impl_->messages.size();
}
std::vector<std::string> Context::validation_messages() const {
    std::lock_guard lock(impl_->messages_mutex);
    return impl_->messages;
}
bool Context::validation_enabled() const { return impl_->validation; }
KernelProfile& Context::profile() { return impl_->profile; }

ContextOptions ContextOptions::from_environment() {
    ContextOptions options;
    const char* validation = std::getenv("ADJOINT_VALIDATION");
    options.validation = validation && *validation && std::string_view(validation) != "0";
    if (const char* d = std::getenv("ADJOINT_DEVICE")) options.device_override = d;
    return options;
}

} // namespace adjoint::vk
