// Names of VkResult codes and the error messages built from them.
#include "vulkan/vk_check.h"

#include <string_view>

namespace adjoint::vk {

const char* to_string(VkResult result) {
    switch (result) {
        // clang-format off
#define ADJOINT_VK_RESULT(name) case name: return #name;
        ADJOINT_VK_RESULT(VK_SUCCESS)
        ADJOINT_VK_RESULT(VK_NOT_READY)
        ADJOINT_VK_RESULT(VK_TIMEOUT)
        ADJOINT_VK_RESULT(VK_EVENT_SET)
        ADJOINT_VK_RESULT(VK_EVENT_RESET)
        ADJOINT_VK_RESULT(VK_INCOMPLETE)
        ADJOINT_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
        ADJOINT_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        ADJOINT_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
        ADJOINT_VK_RESULT(VK_ERROR_DEVICE_LOST)
        ADJOINT_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
        ADJOINT_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
        ADJOINT_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
        ADJOINT_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
        ADJOINT_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
        ADJOINT_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
        ADJOINT_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
        ADJOINT_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
        ADJOINT_VK_RESULT(VK_ERROR_UNKNOWN)
        ADJOINT_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
        ADJOINT_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        ADJOINT_VK_RESULT(VK_ERROR_FRAGMENTATION)
        ADJOINT_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
        ADJOINT_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
        ADJOINT_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
#undef ADJOINT_VK_RESULT
        // clang-format on
    default:
        return "VK_RESULT_UNKNOWN";
    }
}

void throw_vk_error(VkResult result, const char* call, const char* file, int line, size_t bytes) {
    // Keep the message readable: the file's last component is enough to find the line.
    std::string_view path = file;
    if (auto cut = path.rfind('/'); cut != std::string_view::npos)
        path = path.substr(cut + 1);
    const char* what = "failed";
    if (result == VK_ERROR_DEVICE_LOST)
        what = "failed: the Vulkan device was lost (driver crash, reset or a kernel that ran too long)";
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) {
        fail(call, " failed with ", to_string(result), ": out of ",
             result == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "device" : "host", " memory (", bytes,
             " bytes requested) at ", path, ":", line);
    }
    fail(call, " ", what, " with ", to_string(result), " (", static_cast<int>(result), ") at ", path, ":",
         line);
}

} // namespace adjoint::vk
