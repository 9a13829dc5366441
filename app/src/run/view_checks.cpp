// What the programs say before rendering a scene whose meshes a view cannot show (out_of_view): adjoint-render
// warns, and an optimization, which would see nothing move at its scene's values or at its start values, is
// refused.
#include <adjoint/app/optimization.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/run.h>

namespace adjoint::app {

namespace {

// "meshes[0] 'engine' lies beyond camera.far (100): ..." for the first view that cannot show it.
std::string mesh_reason(const Scene& scene, size_t mesh, const std::string& why) {
    return "meshes[" + std::to_string(mesh) + "] '" + scene.meshes[mesh].name + "' lies " + why;
}

} // namespace

std::string empty_view_warning(const Scene& scene, uint32_t view) {
    if (scene.meshes.empty() || view >= scene.views.size()) return "";
    std::string first;
    for (size_t m = 0; m < scene.meshes.size(); ++m) {
        const std::string why = out_of_view(scene.meshes[m], scene.views[view]);
        if (why.empty()) return "";
        if (first.empty()) first = mesh_reason(scene, m, why);
    }
    return "adjoint: warning: " + scene.display_name + ": view " + std::to_string(view) + " shows no mesh: " + first +
           (scene.meshes.size() > 1 ? " (and the others are out of it too)" : "") + "\n";
}

namespace {

// The meshes `scene` shows and the free parameters that move them, as check_meshes_in_view says; `when` says
// which values are judged ("" for the scene's own, or " at the start values").
void check_shown(const Scene& scene, const std::string& when) {
    // Per mesh, why the first view cannot show it, or "" when some view may.
    std::vector<std::string> hidden(scene.meshes.size());
    bool any_shown = false;
    for (size_t m = 0; m < scene.meshes.size(); ++m) {
        for (size_t v = 0; v < scene.views.size(); ++v) {
            const std::string why = out_of_view(scene.meshes[m], scene.views[v]);
            if (why.empty()) {
                hidden[m].clear();
                break;
            }
            if (hidden[m].empty()) hidden[m] = (scene.views.size() > 1 ? "in view " + std::to_string(v) + " " : "") + why;
        }
        any_shown = any_shown || hidden[m].empty();
    }
    if (!any_shown)
        throw SceneError(scene.display_name, "camera",
                         "no view shows any mesh" + when + " (" + mesh_reason(scene, 0, hidden[0]) +
                             "): the images would hold the background alone and nothing would move");
    for (const Parameter& p : scene.optimize->parameters)
        if (kind_info(p.kind).collection == ParameterCollection::meshes && p.target < hidden.size() &&
            !hidden[p.target].empty())
            throw SceneError(scene.display_name, "optimize.parameters." + p.path,
                             "no view shows the mesh it moves" + when + " (" +
                                 mesh_reason(scene, p.target, hidden[p.target]) + "): it would get no gradient");
}

} // namespace

void check_meshes_in_view(const Scene& scene) {
    if (!scene.optimize || scene.meshes.empty()) return;
    check_shown(scene, "");
    // The start values (init, or a seeded perturbation) make the first pictures, and the loader checked only the
    // scene's own: a free camera started at its target, or a mesh perturbed out of every view (a translation's
    // perturb is in scene units: 0.1 is 10,000 radii of a mesh scaled by 1e-5), would run and never move.
    const Scene start = start_scene(scene);
    for (size_t v = 0; v < start.views.size(); ++v) {
        const std::string what = camera_problem(start.views[v]);
        if (!what.empty())
            throw SceneError(scene.display_name, "optimize.parameters",
                             "at the start values, view " + std::to_string(v) + "'s camera cannot look: " + what);
    }
    check_shown(start, " at the start values");
}

} // namespace adjoint::app
