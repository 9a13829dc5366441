// An image panel's zoom and pan: the mouse wheel zooms about the point under the cursor, a drag pans, a double
// click resets; the panel then shows the texture's [uv0, uv1]. Shared by the view panels and the texture panels.
#pragma once
#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace adjoint::studio {

struct ZoomPan {
    float zoom = 1.0f;          // 1: the whole texture; at most 64
    ImVec2 centre{0.5f, 0.5f};  // texture coordinates

    // Call right after the panel's InvisibleButton, which covers [p, p + size].
    void interact(ImVec2 p, ImVec2 size) {
        const ImGuiIO& io = ImGui::GetIO();
        const float span = 1.0f / zoom;
        if (ImGui::IsItemHovered() && io.MouseWheel != 0.0f) {
            const float fx = (io.MousePos.x - p.x) / size.x, fy = (io.MousePos.y - p.y) / size.y;
            const float u = centre.x + (fx - 0.5f) * span, v = centre.y + (fy - 0.5f) * span;
            zoom = std::clamp(zoom * std::pow(1.25f, io.MouseWheel), 1.0f, 64.0f);
            const float s2 = 1.0f / zoom;
            centre = {u - (fx - 0.5f) * s2, v - (fy - 0.5f) * s2};
        }
        if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f)) {
            centre.x -= io.MouseDelta.x / size.x * span;
            centre.y -= io.MouseDelta.y / size.y * span;
        }
        if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) *this = {};
        const float s = 1.0f / zoom;   // the window never leaves the texture
        centre.x = std::clamp(centre.x, s * 0.5f, 1.0f - s * 0.5f);
        centre.y = std::clamp(centre.y, s * 0.5f, 1.0f - s * 0.5f);
    }
    ImVec2 uv0() const { return {centre.x - 0.5f / zoom, centre.y - 0.5f / zoom}; }
    ImVec2 uv1() const { return {centre.x + 0.5f / zoom, centre.y + 0.5f / zoom}; }
};

} // namespace adjoint::studio
