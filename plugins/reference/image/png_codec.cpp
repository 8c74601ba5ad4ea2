// PNG through libpng, converted as Pillow 9.4 converts to RGB (it made
// ONNX's test data): alpha and tRNS are dropped, grey is repeated, 1/2/4-bit
// grey is scaled to 0..255, 16-bit samples keep their high byte, and a
// palette index past the palette's end is grey (Pillow's palettes start as
// a grey ramp). Gamma and colour chunks are ignored, as Pillow does. One
// difference: Pillow reads 16-bit grey as 32-bit integers and clips them at
// 255; here it keeps the high byte, as for 16-bit RGB.
//
// libpng reports a fatal error by calling its error function, which must
// not return: here it longjmps (png_longjmp) back to the one function that
// called setjmp. Those functions (read_info, read_rows) make only C calls
// and keep their state in a PngState owned by their caller, so the jump
// skips no C++ destructor. Warnings are dropped, never printed.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <png.h>

#include "image/codecs.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "PNG";

struct PngState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  int passes = 1;  // 7 for an interlaced image
  char message[256] = "unknown libpng error";

  ~PngState() { png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr); }
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto* s = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep out, size_t n) {
  auto* s = static_cast<PngState*>(png_get_io_ptr(png));
  if (n > s->size - s->pos) png_error(png, "truncated data");
  std::memcpy(out, s->data + s->pos, n);
  s->pos += n;
}

// Reads the header and sets the transforms: afterwards each row is 8-bit
// RGB, or one palette index per pixel for a palette image.
bool read_info(PngState& s) {
  if (setjmp(png_jmpbuf(s.png))) return false;
  png_set_read_fn(s.png, &s, read_bytes);
  png_read_info(s.png, s.info);
  const int color_type = png_get_color_type(s.png, s.info);
  if (png_get_bit_depth(s.png, s.info) == 16) png_set_strip_16(s.png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_packing(s.png);
  } else {
    png_set_expand_gray_1_2_4_to_8(s.png);
    png_set_gray_to_rgb(s.png);
    png_set_strip_alpha(s.png);
  }
  s.passes = png_set_interlace_handling(s.png);
  png_read_update_info(s.png, s.info);
  return true;
}

// Reads every pass of every row into place: row y of the output is
// `first_row + y * row_bytes`. An interlaced image's later passes fill in
// the rows the earlier ones left, since each row stays where it is.
bool read_rows(PngState& s, uint8_t* first_row, size_t row_bytes, int64_t height, int passes) {
  if (setjmp(png_jmpbuf(s.png))) return false;
  for (int pass = 0; pass < passes; ++pass)
    for (int64_t y = 0; y < height; ++y) png_read_row(s.png, first_row + static_cast<size_t>(y) * row_bytes, nullptr);
  return true;
}

[[noreturn]] void fail(const std::string& why) { throw DecodeError(std::string(kFormat) + ": " + why); }

}  // namespace

DecodedImage decode_png(const uint8_t* data, size_t size) {
  PngState s;
  s.data = data;
  s.size = size;
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, on_error, on_warning);
  if (s.png == nullptr) fail("cannot create a libpng reader");
  s.info = png_create_info_struct(s.png);
  if (s.info == nullptr) fail("cannot create a libpng info struct");
  if (!read_info(s)) fail(s.message);

  DecodedImage img = allocate_image(png_get_image_width(s.png, s.info), png_get_image_height(s.png, s.info), kFormat);
  const bool indexed = png_get_color_type(s.png, s.info) == PNG_COLOR_TYPE_PALETTE;
  const size_t row_bytes = static_cast<size_t>(img.width) * (indexed ? 1 : 3);
  if (png_get_rowbytes(s.png, s.info) != row_bytes)
    fail("rows of " + std::to_string(png_get_rowbytes(s.png, s.info)) + " bytes after conversion, " +
         std::to_string(row_bytes) + " expected");
  std::vector<uint8_t> indices(indexed ? static_cast<size_t>(img.width * img.height) : 0);
  if (!read_rows(s, indexed ? indices.data() : img.rgb.data(), row_bytes, img.height, s.passes)) fail(s.message);
  if (!indexed) return img;

  uint8_t palette[256 * 3];
  for (int i = 0; i < 256; ++i) palette[3 * i] = palette[3 * i + 1] = palette[3 * i + 2] = static_cast<uint8_t>(i);
  png_colorp entries = nullptr;
  int count = 0;
  if (png_get_PLTE(s.png, s.info, &entries, &count) != 0)
    for (int i = 0; i < count && i < 256; ++i) {
      palette[3 * i] = entries[i].red;
      palette[3 * i + 1] = entries[i].green;
      palette[3 * i + 2] = entries[i].blue;
    }
  for (size_t i = 0; i < indices.size(); ++i) std::memcpy(img.rgb.data() + 3 * i, palette + 3 * indices[i], 3);
  return img;
}

}  // namespace loom::reference::image
