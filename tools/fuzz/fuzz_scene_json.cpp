// libFuzzer target: the scene file (JSON) itself, loaded from the fuzz folder's scenes/, where the files that
// assets/scenes/*.json name (../meshes/*.obj, ../textures/*.png) have small stand-ins.
#include "fuzz_scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    adjoint::fuzz::load(adjoint::fuzz::text(data, size), adjoint::fuzz::folder() / "scenes");
    return 0;
}
