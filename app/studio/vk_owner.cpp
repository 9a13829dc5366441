// Memory types for the studio's own images and buffers.
#include "vk_owner.h"

namespace adjoint::studio {

uint32_t find_memory_type(VkPhysicalDevice physical_device, uint32_t bits, VkMemoryPropertyFlags want,
                          bool fallback) {
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(physical_device, &props);
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
        if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
    if (fallback)
        for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
            if (bits & (1u << i)) return i;
    fail("no Vulkan memory type with properties 0x", std::hex, want, " among 0x", bits);
}

} // namespace adjoint::studio
