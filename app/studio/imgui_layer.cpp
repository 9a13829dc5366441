// Dear ImGui's set-up and shut-down on the engine's device.
#include "imgui_layer.h"

#include "presenter.h"

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace adjoint::studio {

namespace {

void imgui_check(VkResult r) { interop::check(r, "a call of Dear ImGui's Vulkan backend", __FILE__, __LINE__); }

} // namespace

ImGuiLayer::ImGuiLayer(GLFWwindow* window, Device& device, const Presenter& presenter) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;   // the same layout every start (tests read panels at known places)
    ImGui::StyleColorsDark();
    ImGui::GetStyle().WindowRounding = 0.0f;
    try {
        init_backends(window, device, presenter);
        upload_fonts(device);
    } catch (...) {
        shut_down();   // the destructor does not run for a constructor that throws
        throw;
    }
}

ImGuiLayer::~ImGuiLayer() { shut_down(); }

void ImGuiLayer::shut_down() {
    if (vulkan_ready_) ImGui_ImplVulkan_Shutdown();
    if (glfw_ready_) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    vulkan_ready_ = glfw_ready_ = false;
}

void ImGuiLayer::init_backends(GLFWwindow* window, Device& device, const Presenter& presenter) {
    glfw_ready_ = ImGui_ImplGlfw_InitForVulkan(window, true);

    const interop::DeviceHandles h = interop::handles(device);
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    pool.maxSets = 4;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    ADJOINT_VK_CHECK(vkCreateDescriptorPool(h.device, &pool, nullptr, pool_.out(h.device)));

    ImGui_ImplVulkan_InitInfo info{};
    info.Instance = h.instance;
    info.PhysicalDevice = h.physical_device;
    info.Device = h.device;
    info.QueueFamily = h.queue_family;
    info.Queue = h.queue;
    info.DescriptorPool = pool_.get();
    info.Subpass = 0;
    info.MinImageCount = presenter.min_image_count();
    // The backend cycles its vertex buffers over ImageCount frames; the presenter has at most 2 in flight.
    info.ImageCount = std::max(presenter.image_count(), std::max(presenter.min_image_count(), 3u));
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    info.CheckVkResultFn = imgui_check;
    vulkan_ready_ = ImGui_ImplVulkan_Init(&info, presenter.render_pass());
}

void ImGuiLayer::upload_fonts(Device& device) {
    const interop::DeviceHandles h = interop::handles(device);
    vko::CommandPool cmd_pool;
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = h.queue_family;
    ADJOINT_VK_CHECK(vkCreateCommandPool(h.device, &pool_info, nullptr, cmd_pool.out(h.device)));
    VkCommandBuffer cmd;
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = cmd_pool.get();
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    ADJOINT_VK_CHECK(vkAllocateCommandBuffers(h.device, &alloc, &cmd));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    ADJOINT_VK_CHECK(vkBeginCommandBuffer(cmd, &begin));
    ImGui_ImplVulkan_CreateFontsTexture(cmd);
    ADJOINT_VK_CHECK(vkEndCommandBuffer(cmd));
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    interop::with_queue(device, [&](VkQueue q) {
        ADJOINT_VK_CHECK(vkQueueSubmit(q, 1, &submit, VK_NULL_HANDLE));
        ADJOINT_VK_CHECK(vkQueueWaitIdle(q));
    });
    ImGui_ImplVulkan_DestroyFontUploadObjects();
}

void ImGuiLayer::new_frame(bool hide_pointer) {
    ImGui_ImplVulkan_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (hide_pointer) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
}

} // namespace adjoint::studio
