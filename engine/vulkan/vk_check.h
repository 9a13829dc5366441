// VK_CHECK: turns a failed VkResult into an adjoint::Error that names the call, the result and the line.
#pragma once
#include <adjoint/core/error.h>

#include <vulkan/vulkan.h>

#include <cstddef>

// Vulkan structs are written T{sType} on purpose: value-initialization zeroes the rest, as Vulkan expects.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::vk {

const char* to_string(VkResult result);

// `bytes` is the size of the allocation being attempted, reported when the result is out-of-memory.
[[noreturn]] void throw_vk_error(VkResult result, const char* call, const char* file, int line, size_t bytes);

inline void check(VkResult result, const char* call, const char* file, int line, size_t bytes = 0) {
    if (result != VK_SUCCESS)
        throw_vk_error(result, call, file, line, bytes);
}

} // namespace adjoint::vk

#define VK_CHECK(call) ::adjoint::vk::check((call), #call, __FILE__, __LINE__)
#define VK_CHECK_ALLOC(call, bytes) ::adjoint::vk::check((call), #call, __FILE__, __LINE__, (bytes))
