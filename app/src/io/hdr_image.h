// Reading high-dynamic-range images (OpenEXR, Radiance .hdr; PNG/JPEG sRGB-decoded) as linear float RGBA.
#pragma once
#include <adjoint/app/image_io.h>

#include <cstdint>
#include <filesystem>

namespace adjoint::app {

// The image in `path` as linear radiance: 4 channels (RGBA, alpha 1 where the file has none), rows top
// first, picked by the extension (any case):
// - `.exr`: OpenEXR, every compression it reads (DWAB included), scanline or tiled, the first part; the data
//   window's pixels; R, G, B, A read as float (a float32 file keeps values above half's 65504); a file with
//   luminance (Y, RY, BY) and no R, G, B goes through OpenEXR's RGBA interface;
// - `.hdr`: Radiance RGBE (stb_image, linear as stored);
// - `.png`, `.jpg`, `.jpeg`: sRGB-decoded to linear, alpha kept linear (decode_image_linear).
// Values: small negatives become 0 (lossy DWA/B44 compression and gamut conversions leave them: down to -0.004
// in Blender's studio lights, whose largest values are 55 to 34,000); a negative below -max(0.01, 1e-3 times
// the image's largest value), a NaN or an infinity is an error naming the texel (radiance cannot be negative).
// adjoint::Error naming the file when the file cannot be read, its extension is none
// of the above, its content is not of the kind the extension says or is corrupt, or a side is over
// `max_side` (checked from the header, before the pixels are allocated). The aspect is not checked here.
Image read_hdr_image(const std::filesystem::path& path, uint32_t max_side);

} // namespace adjoint::app
