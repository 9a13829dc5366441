// A tiny 5x7 bitmap font (digits, capitals, a few signs) for the report's labels; drawn into an Image.
#pragma once
#include <adjoint/app/image_io.h>

#include <array>
#include <string_view>

namespace adjoint::app::font {

inline constexpr int glyph_width = 5;
inline constexpr int glyph_height = 7;
inline constexpr int advance = 6;  // glyph plus one column of spacing

// The glyph's rows, top first, bit 4 the leftmost column. Lower-case letters use the capitals; a
// character without a glyph draws as '?'.
const std::array<uint8_t, 7>& glyph(char c);

// Draws `text` with its top-left corner at (x, y), each font pixel a scale x scale square, in `colour`
// (linear RGB); pixels outside the image or at x >= clip_x are skipped.
void draw_text(Image& image, int x, int y, std::string_view text, int scale, const std::array<float, 3>& colour,
               int clip_x = 1 << 30);

// Width in pixels of `text` drawn at `scale` (no trailing spacing).
int text_width(std::string_view text, int scale);

} // namespace adjoint::app::font
