// What a physical device offers: its kind, limits, compute queue family, atomics, uint64 and subgroup
// support, and whether it meets a caller's extra requirements (interop).
#include "vulkan/vk_internal.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace adjoint::vk {

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
    return std::any_of(list.begin(), list.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
    });
}

std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice pd) {
    uint32_t n = 0;
    VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr));
    std::vector<VkExtensionProperties> list(n);
    VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, list.data()));
    return list;
}

namespace {

DeviceKind kind_of(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return DeviceKind::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return DeviceKind::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return DeviceKind::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return DeviceKind::Cpu;
    default:
        return DeviceKind::Other;
    }
}

// The first queue family with compute; a dedicated compute family would not help a stream that also copies.
std::optional<uint32_t> compute_family(VkPhysicalDevice pd) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
    for (uint32_t i = 0; i < n; ++i)
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return i;
    return std::nullopt;
}

} // namespace

DeviceInfo describe(VkPhysicalDevice pd, uint32_t index) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    DeviceInfo d;
    d.index = index;
    d.name = props.deviceName;
    d.kind = kind_of(props.deviceType);
    d.api_version = props.apiVersion;
    const auto family = compute_family(pd);
    d.has_compute_queue = family.has_value();
    d.queue_family = family.value_or(0);
    d.max_push_constants = props.limits.maxPushConstantsSize;
    std::copy_n(props.limits.maxComputeWorkGroupCount, 3, d.max_workgroup_count);
    std::copy_n(props.limits.maxComputeWorkGroupSize, 3, d.max_workgroup_size);
    d.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
    d.max_shared_memory = props.limits.maxComputeSharedMemorySize;
    d.max_storage_buffer_range = props.limits.maxStorageBufferRange;
    d.max_texel_buffer_elements = props.limits.maxTexelBufferElements;
    d.texel_reads = uint64_t(d.max_texel_buffer_elements) >= d.max_storage_buffer_range / 4;
    for (uint32_t words : {1u, 2u, 4u}) {
        VkFormatProperties format;
        vkGetPhysicalDeviceFormatProperties(pd, texel_format(words), &format);
        d.texel_reads = d.texel_reads && (format.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT);
    }
    if (d.api_version < VK_API_VERSION_1_1)
        return d; // features2 is core 1.1; such devices are passed over

    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props2.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(pd, &props2);
    d.subgroup_size = subgroup.subgroupSize;
    d.subgroup_operations = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? subgroup.supportedOperations : 0;

    auto exts = device_extensions(pd);
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
    VkPhysicalDeviceShaderAtomicInt64FeaturesKHR atomic64{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    const bool has_atomic = has_extension(exts, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    const bool has_atomic2 = has_extension(exts, VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
    const bool has_atomic64 = has_extension(exts, VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME);
    if (has_atomic64) {
        atomic64.pNext = features.pNext;
        features.pNext = &atomic64;
    }
    if (has_atomic) {
        atomic.pNext = features.pNext;
        features.pNext = &atomic;
    }
    if (has_atomic2) {
        atomic2.pNext = features.pNext;
        features.pNext = &atomic2;
    }
    vkGetPhysicalDeviceFeatures2(pd, &features);
    d.float_atomic_add = has_atomic && atomic.shaderBufferFloat32AtomicAdd;
    d.float_atomic_min_max = has_atomic2 && atomic2.shaderBufferFloat32AtomicMinMax;
    d.shared_float_atomic_add = has_atomic && atomic.shaderSharedFloat32AtomicAdd;
    d.shared_float_atomic_min_max = has_atomic2 && atomic2.shaderSharedFloat32AtomicMinMax;
    d.int64 = features.features.shaderInt64;
    d.int64_atomics = d.int64 && has_atomic64 && atomic64.shaderBufferInt64Atomics;
    d.shared_int64_atomics = d.int64 && has_atomic64 && atomic64.shaderSharedInt64Atomics;
    return d;
}

// The caller's extra requirements (interop): its device extensions, and a compute family it accepts.
void check_extras(DeviceInfo& d, VkPhysicalDevice pd, VkInstance instance, const ContextExtras& extras) {
    if (!d.has_compute_queue || d.api_version < VK_API_VERSION_1_1)
        return;
    const auto exts = device_extensions(pd);
    for (const auto& e : extras.device_extensions)
        if (!has_extension(exts, e.c_str())) {
            d.unmet = "lacks the device extension " + e;
            return;
        }
    if (!extras.accept_queue_family)
        return;
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
    for (uint32_t i = 0; i < n; ++i)
        if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && extras.accept_queue_family(instance, pd, i)) {
            d.queue_family = i;
            return;
        }
    d.unmet = "no queue family with compute that the caller accepts";
}

} // namespace adjoint::vk
