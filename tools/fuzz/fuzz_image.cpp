// libFuzzer target: the image decoders. Byte 0 % 3 picks PNG/JPEG from memory (decode_image_linear: target
// images and textures), or the high-dynamic-range reader (read_hdr_image: environment maps) on a .hdr or
// an .exr file; the image is the bytes from 1 on.
#include "fuzz_scene.h"
#include "io/hdr_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string_view image = adjoint::fuzz::text(data + 1, size - 1);
    const int mode = data[0] % 3;
    try {
        if (mode == 0) {
            // As its callers do (image_file.cpp, read_hdr_image): the sides from the header first, then the
            // decode; a 683-byte JPEG may claim 35848x520 pixels, seconds to decode under ASan.
            int width = 0, height = 0, channels = 0;
            const std::string bytes(image);
            adjoint::app::check_png_or_jpeg(bytes, "fuzz.png", width, height, channels);
            if (width > 1024 || height > 1024) return 0;
            (void)adjoint::app::decode_image_linear(bytes, "fuzz.png");
        } else {
            const char* name = mode == 1 ? "i.hdr" : "i.exr";
            adjoint::fuzz::write(name, image);
            (void)adjoint::app::read_hdr_image(adjoint::fuzz::folder() / name, 1024);
        }
    } catch (const adjoint::Error&) {
    }
    return 0;
}
