// libFuzzer target: the glTF 2.0 loader (.gltf text or .glb, by the input's magic) with its materials.
#include "fuzz_scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const std::string name = bytes.substr(0, 4) == "glTF" ? "m.glb" : "m.gltf";
    adjoint::fuzz::write(name, bytes);
    adjoint::fuzz::load(adjoint::fuzz::scene_json(name, "gltf"));
    return 0;
}
