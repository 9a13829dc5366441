// libFuzzer target: the OBJ loader and its MTL files. The input is the OBJ's text, then, after a line
// "#@mtl", the text of m.mtl (which the OBJ names with `mtllib m.mtl`); with an MTL part the mesh takes
// "material": "mtl", without one a scene material.
#include "fuzz_scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes = adjoint::fuzz::text(data, size);
    constexpr std::string_view marker = "#@mtl\n";
    const size_t at = bytes.find(marker);
    adjoint::fuzz::write("m.obj", bytes.substr(0, at));
    if (at == std::string_view::npos) {
        adjoint::fuzz::load(adjoint::fuzz::scene_json("m.obj", "m"));
        return 0;
    }
    adjoint::fuzz::write("m.mtl", bytes.substr(at + marker.size()));
    adjoint::fuzz::load(adjoint::fuzz::scene_json("m.obj", "mtl"));
    return 0;
}
