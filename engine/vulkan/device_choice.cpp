// Choosing a physical device: a pure function over DeviceInfo so the policy is testable without a driver.
#include "vulkan/vk_runtime.h"

#include <vulkan/vulkan_core.h>

#include <algorithm>
#include <cctype>

namespace adjoint::vk {

const char* to_string(DeviceKind kind) {
    switch (kind) {
    case DeviceKind::Discrete:
        return "discrete";
    case DeviceKind::Integrated:
        return "integrated";
    case DeviceKind::Virtual:
        return "virtual";
    case DeviceKind::Cpu:
        return "cpu";
    case DeviceKind::Other:
        return "other";
    }
    return "other";
}

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string version_string(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

// Why a device cannot run the engine at all; empty when it can.
std::string unusable_reason(const DeviceInfo& d) {
    if (d.api_version < VK_API_VERSION_1_1)
        return "Vulkan " + version_string(d.api_version) + " < 1.1 required";
    if (!d.has_compute_queue)
        return "no compute queue";
    return d.unmet;
}

} // namespace

DeviceChoice choose_device(std::span<const DeviceInfo> devices, std::string_view override_spec) {
    DeviceChoice choice;
    if (devices.empty()) {
        choice.report.push_back("no Vulkan physical devices found");
        return choice;
    }
    const bool by_index = !override_spec.empty() && std::all_of(override_spec.begin(), override_spec.end(),
                                                                [](char c) { return c >= '0' && c <= '9'; });
    const std::string needle = lower(override_spec);
    auto matches = [&](const DeviceInfo& d) {
        if (override_spec.empty())
            return true;
        if (by_index)
            return override_spec.size() < 10 && d.index == std::stoul(std::string(override_spec));
        return lower(d.name).find(needle) != std::string::npos;
    };

    std::vector<std::string> reasons(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) {
        if (!matches(devices[i]))
            reasons[i] = "ADJOINT_DEVICE=" + std::string(override_spec) + " does not match";
        else
            reasons[i] = unusable_reason(devices[i]);
        // DeviceKind's declaration order is the ranking; ties go to the first enumerated.
        if (reasons[i].empty() && (!choice.chosen || devices[i].kind < devices[*choice.chosen].kind))
            choice.chosen = static_cast<uint32_t>(i);
    }
    for (size_t i = 0; i < devices.size(); ++i) {
        const DeviceInfo& d = devices[i];
        std::string line = d.name + " [" + to_string(d.kind) + "]: ";
        if (choice.chosen == i)
            line += "chosen";
        else if (!reasons[i].empty())
            line += "passed over: " + reasons[i];
        else
            line += "passed over: ranked below " + devices[*choice.chosen].name;
        choice.report.push_back(std::move(line));
    }
    if (!choice.chosen && !override_spec.empty())
        choice.report.push_back("ADJOINT_DEVICE=" + std::string(override_spec) +
                                " selects no usable device; unset it to choose automatically");
    return choice;
}

} // namespace adjoint::vk
