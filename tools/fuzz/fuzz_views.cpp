// libFuzzer target: the dataset view sources. The first byte picks NeRF's transforms.json, or a COLMAP model
// as text or binary; a COLMAP input is the cameras file, then the images file from the offset bytes 1-2 give.
#include "fuzz_scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 3) return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data) + 3, size - 3);
    const uint8_t mode = data[0] % 3;
    if (mode == 0) {
        adjoint::fuzz::write("transforms.json", rest);
        adjoint::fuzz::load(adjoint::fuzz::scene_json("tri.obj", "m", R"({"nerf": "transforms.json"})"));
        return 0;
    }
    const size_t split = std::min<size_t>(rest.size(), size_t(data[1]) | size_t(data[2]) << 8);
    const bool text = mode == 1;
    std::filesystem::create_directories(adjoint::fuzz::folder() / "sparse");
    std::filesystem::remove(adjoint::fuzz::folder() / "sparse" / (text ? "cameras.bin" : "cameras.txt"));
    adjoint::fuzz::write(text ? "sparse/cameras.txt" : "sparse/cameras.bin", rest.substr(0, split));
    adjoint::fuzz::write(text ? "sparse/images.txt" : "sparse/images.bin", rest.substr(split));
    adjoint::fuzz::load(adjoint::fuzz::scene_json("tri.obj", "m", R"({"colmap": "sparse", "images": "."})"));
    return 0;
}
