// The parameter table: each free parameter's value, true value, error, gradient norm and live learning rate, in
// columns as wide as what they hold (names and quaternions whole; a rotation also as degrees about an axis); a
// texture's value cell holds its thumbnail, which opens it in the Textures tab.
#include "panels.h"

#include <imgui_internal.h>   // the column width the table gave (ImGuiTableColumn::WidthGiven)

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>

namespace adjoint::studio {

namespace {

constexpr double kDegrees = 180.0 / std::numbers::pi;
constexpr float kThumbnailHeight = 40.0f;

// The path, and for a material's parameter the material's model ("materials.ball.roughness (pbr)"); the
// state's index is the scene's optimize.parameters index.
std::string parameter_label(const app::Scene& scene, size_t i, const app::ParameterState& p) {
    const bool material = p.kind == app::ParameterKind::material_value || p.kind == app::ParameterKind::material_texture;
    if (!material || !scene.optimize || i >= scene.optimize->parameters.size()) return p.path;
    return p.path + " (" + scene.materials.at(scene.optimize->parameters[i].target).model + ")";
}

// A unit quaternion [w, x, y, z] as "<angle> deg about [x, y, z]".
std::string rotation_text(const std::vector<float>& q) {
    if (q.size() != 4) return {};
    const double norm = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] + double(q[2]) * q[2] + double(q[3]) * q[3]);
    if (!(norm > 0)) return {};
    // q and -q are one rotation: the turn of at most 180 degrees.
    const double sign = q[0] < 0 ? -1.0 : 1.0;
    const double w = std::min(std::abs(double(q[0])) / norm, 1.0);
    const double s = std::sqrt(std::max(1.0 - w * w, 0.0));
    const double angle = 2.0 * std::acos(w) * kDegrees;
    if (s < 1e-7) return "0 deg";
    return format("%.2f deg about [", angle) + format("%.2f", sign * q[1] / norm / s) + ", " +
           format("%.2f", sign * q[2] / norm / s) + ", " + format("%.2f", sign * q[3] / norm / s) + "]";
}

std::string describe_value(const std::vector<float>& v, const app::ParameterState& p) {
    if (p.kind == app::ParameterKind::material_texture || p.kind == app::ParameterKind::light_texture)
        return "texture " + std::to_string(p.texture_width) + "x" + std::to_string(p.texture_height);
    if (v.size() > 4) return std::to_string(v.size()) + " values";
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format("%.3g", v[i]);
    s += "]";
    if (p.kind == app::ParameterKind::mesh_rotation) s += "\n" + rotation_text(v);   // a second line: the turn
    return s;
}

std::string describe_error(const app::ParameterState& p) {
    if (!p.error) return "-";
    // A rotation's error is its geodesic angle in radians (params.json's unit); people read degrees.
    if (p.kind == app::ParameterKind::mesh_rotation)
        return format("%.3g rad", *p.error) + format(" = %.3g deg", *p.error * kDegrees);
    return format("%.3e", *p.error);
}

} // namespace

// A cell's text, counted as clipped when its column is narrower than the text.
void RunPanels::table_cell(const std::string& text) {
    ImGui::TableNextColumn();
    // Against the width the table's layout gave the column (not the window's visible part: the table scrolls
    // sideways, and a column scrolled out of view is not cut).
    const ImGuiTable* table = ImGui::GetCurrentTable();
    const float width = table->Columns[table->CurrentColumn].WidthGiven;
    if (ImGui::CalcTextSize(text.c_str()).x > width + 0.5f) ++table_.clipped_cells;
    ImGui::TextUnformatted(text.c_str());
}

void RunPanels::draw_parameter_table(Session& session) {
    // Each column as wide as its widest cell this frame (a value that grows a digit is never cut for a frame);
    // the table scrolls sideways when they need more room than the window has.
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    const char* names[5] = {"parameter", "value", "true value", "error", "|gradient|"};
    table_ = {};
    if (!session.optimizable()) return;
    TextureView& textures = workspace_.texture_view();
    const auto& params = session.parameters();
    float widths[5];
    for (size_t c = 0; c < 5; ++c) widths[c] = ImGui::CalcTextSize(names[c]).x;
    for (size_t i = 0; i < params.size(); ++i) {
        const app::ParameterState& p = params[i];
        table_.rows.push_back({parameter_label(session.scene(), i, p), describe_value(p.value, p),
                               p.true_value ? describe_value(*p.true_value, p) : "-", describe_error(p),
                               format("%.3e", p.grad_norm)});
        for (size_t c = 0; c < 5; ++c) widths[c] = std::max(widths[c], ImGui::CalcTextSize(table_.rows.back()[c].c_str()).x);
        widths[1] = std::max(widths[1], textures.thumbnail_width(i, kThumbnailHeight));
    }
    // A fixed column's width is taken when its table first appears; a table of other widths is another table
    // (its id names them), so a value that grew this frame gets its room in this frame.
    std::string id = "params";
    for (float w : widths) id += "_" + std::to_string(int(std::ceil(w)));
    if (!ImGui::BeginTable(id.c_str(), 6, flags)) return;
    // The learning rate, the one cell that takes input, comes right after the value: in the studio's default
    // 1280x800 window the middle column is 660 pixels wide, and as the last column it sat past the edge, behind
    // the sideways scroll, whenever a value was long (a rotation's quaternion and axis-angle).
    ImGui::TableSetupScrollFreeze(1, 1);
    for (size_t c = 0; c < 5; ++c) {
        ImGui::TableSetupColumn(names[c], ImGuiTableColumnFlags_WidthFixed, widths[c]);
        if (c == 1) ImGui::TableSetupColumn("learning rate", ImGuiTableColumnFlags_WidthFixed, 90.0f);
    }
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < params.size(); ++i) {
        ImGui::TableNextRow();
        for (size_t c = 0; c < table_.rows[i].size(); ++c) {
            table_cell(table_.rows[i][c]);
            if (c != 1) continue;
            textures.draw_thumbnail(i, kThumbnailHeight);   // under "texture WxH"
            ImGui::TableNextColumn();
            float lr = params[i].lr;
            ImGui::PushID(int(i));
            ImGui::SetNextItemWidth(-FLT_MIN);
            if (ImGui::InputFloat("##lr", &lr, 0, 0, "%.4g", ImGuiInputTextFlags_EnterReturnsTrue) && lr > 0.0f &&
                std::isfinite(lr)) {
                session.set_learning_rate(i, lr);
                workspace_.edited().optimize->parameters.at(i).lr = lr;
            }
            ImGui::PopID();
        }
    }
    ImGui::EndTable();
}

} // namespace adjoint::studio
