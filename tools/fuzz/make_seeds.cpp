// Writes the binary seeds of tools/fuzz/corpus (checkpoints, JPEG, Radiance HDR, OpenEXR) with the project's
// own encoders and Debian's libraries: `fuzz_make_seeds <corpus folder>` (tools/fuzz/README.md).
#include <adjoint/app/checkpoint.h>
#include <adjoint/app/image_io.h>

#include <ImfRgbaFile.h>
#include <stb_image_write.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using namespace adjoint::app;

namespace {

void write(const fs::path& path, char mode, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << mode << bytes;   // the image target's first byte picks the decoder
}

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A small gradient, the same in every format.
Image gradient(int w, int h, int channels) {
    Image image(w, h, channels);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < channels; ++c) image.at(x, y, c) = float(x + y * c) / float(w + h);
    return image;
}

void images(const fs::path& out, const fs::path& tmp) {
    write(out / "rgb.png", '\0', encode_png_srgb(gradient(6, 4, 3)));
    write(out / "rgba.png", '\0', encode_png_srgb(gradient(3, 5, 4)));
    unsigned char pixels[8 * 8 * 3];
    for (int i = 0; i < 8 * 8 * 3; ++i) pixels[i] = (unsigned char)(i * 7);
    std::string jpeg;
    auto append = [](void* to, void* data, int n) { static_cast<std::string*>(to)->append(static_cast<char*>(data), size_t(n)); };
    stbi_write_jpg_to_func(append, &jpeg, 8, 8, 3, pixels, 80);
    write(out / "rgb.jpg", '\0', jpeg);
    write_hdr(tmp / "a.hdr", gradient(5, 3, 3));
    write(out / "radiance.hdr", '\1', read(tmp / "a.hdr"));
    for (auto [name, compression] : {std::pair{"none", Imf::NO_COMPRESSION}, {"zip", Imf::ZIP_COMPRESSION},
                                     {"piz", Imf::PIZ_COMPRESSION}, {"rle", Imf::RLE_COMPRESSION}}) {
        const fs::path file = tmp / (std::string(name) + ".exr");
        {
            Imf::RgbaOutputFile exr(file.c_str(), 4, 3, Imf::WRITE_RGBA, 1.0f, Imath::V2f(0, 0), 1.0f,
                                    Imf::INCREASING_Y, compression);
            Imf::Rgba rgba[12];
            for (int i = 0; i < 12; ++i) rgba[i] = Imf::Rgba(float(i) / 4, 0.5f, 2.0f, 1.0f);
            exr.setFrameBuffer(rgba, 1, 4);
            exr.writePixels(3);
        }
        write(out / (std::string(name) + ".exr"), '\2', read(file));
    }
}

void checkpoints(const fs::path& out) {
    Checkpoint c;
    c.iteration = 17;
    c.metadata = R"({"scene": "assets/scenes/pose.json"})";
    c.rng_state = {1, 2, 3, 4};
    c.arrays.push_back({"params", {6}, {0.1f, 0.2f, 0.3f, 1.0f, 0.0f, -1.0f}});
    c.arrays.push_back({"adam.m", {2, 3}, {0, 0, 0, 0.5f, 0.25f, NAN}});
    c.arrays.push_back({"adam.t", {}, {3.0f}});
    std::ofstream(out / "pose.bin", std::ios::binary) << encode_checkpoint(c);
    std::ofstream(out / "empty.bin", std::ios::binary) << encode_checkpoint(Checkpoint{});
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const fs::path corpus = argv[1], tmp = fs::temp_directory_path() / "adjoint_fuzz_seeds";
    fs::create_directories(tmp);
    fs::create_directories(corpus / "image");
    fs::create_directories(corpus / "checkpoint");
    images(corpus / "image", tmp);
    checkpoints(corpus / "checkpoint");
    fs::remove_all(tmp);
    return 0;
}
