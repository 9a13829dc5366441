// libFuzzer target: the PLY loader (ASCII and binary of either endianness).
#include "fuzz_scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    adjoint::fuzz::write("m.ply", std::string_view(reinterpret_cast<const char*>(data), size));
    adjoint::fuzz::load(adjoint::fuzz::scene_json("m.ply", "m"));
    return 0;
}
