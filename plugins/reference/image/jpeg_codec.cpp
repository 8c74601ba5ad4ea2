// JPEG through libjpeg(-turbo), decoded as Pillow does it (so the bytes match
// ONNX's test data): the library's defaults (ISLOW DCT, fancy upsampling),
// output in RGB; a four-channel (CMYK / YCCK) image is read as inverted
// CMYK (Adobe's convention, which Pillow assumes) and converted with
// Pillow's cmyk2rgb. A stream that ends early is an error (Pillow refuses
// truncated images); libjpeg's other warnings are ignored, unprinted.
//
// libjpeg reports a fatal error by calling error_exit, which must not
// return: here it longjmps back to the one function that called setjmp.
// Those functions (read_header, read_pixels) make only C calls and keep
// their state in a JpegState owned by their caller, so the jump skips no
// C++ destructor and leaves no local variable indeterminate.
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <string>
#include <vector>

#include <jpeglib.h>
#include <jerror.h>  // JWRN_JPEG_EOF

#include "image/codecs.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "JPEG";
// A progressive stream's scan count is otherwise unbounded: each scan costs
// a pass over the whole image, so a small hostile file could run for hours.
constexpr int kMaxScans = 1000;

struct JpegState {
  jpeg_decompress_struct cinfo{};
  jpeg_error_mgr errors{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};
  bool created = false;

  ~JpegState() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

JpegState& state_of(j_common_ptr cinfo) { return *static_cast<JpegState*>(cinfo->client_data); }

[[noreturn]] void on_error(j_common_ptr cinfo) {
  JpegState& s = state_of(cinfo);
  (*cinfo->err->format_message)(cinfo, s.message);
  std::longjmp(s.jump, 1);
}

void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) on_error(cinfo);  // truncated: fatal
}

void quiet(j_common_ptr) {}

void on_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > kMaxScans) {
    JpegState& s = state_of(cinfo);
    std::snprintf(s.message, sizeof s.message, "more than %d scans", kMaxScans);
    std::longjmp(s.jump, 1);
  }
}

bool read_header(JpegState& s, const uint8_t* data, size_t size) {
  if (setjmp(s.jump)) return false;
  s.created = true;  // jpeg_destroy_decompress is safe on a half-made one
  jpeg_create_decompress(&s.cinfo);
  s.cinfo.progress = &s.progress;
  jpeg_mem_src(&s.cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&s.cinfo, TRUE);
  return true;
}

// Pillow's (a * b + 127) / 255, rounded as it does.
uint8_t mul_div_255(unsigned a, unsigned b) {
  const unsigned t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

// Inverted CMYK -> RGB, Pillow's cmyk2rgb after its "CMYK;I" unpacking.
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, int64_t width) {
  for (int64_t x = 0; x < width; ++x, cmyk += 4, rgb += 3) {
    const unsigned nk = cmyk[3];  // 255 - (255 - k)
    for (int c = 0; c < 3; ++c) {
      const int v = static_cast<int>(nk) - mul_div_255(255u - cmyk[c], nk);
      rgb[c] = static_cast<uint8_t>(v < 0 ? 0 : v);
    }
  }
}

// Decodes every row into `img`; four-channel rows go through `cmyk_row`
// (width * 4 bytes, allocated by the caller).
bool read_pixels(JpegState& s, DecodedImage& img, uint8_t* cmyk_row) {
  if (setjmp(s.jump)) return false;
  jpeg_start_decompress(&s.cinfo);
  if (s.cinfo.output_width != img.width || s.cinfo.output_height != img.height ||
      s.cinfo.output_components != (cmyk_row != nullptr ? 4 : 3)) {
    std::snprintf(s.message, sizeof s.message, "the decoder's output is not the header's size");
    return false;
  }
  while (s.cinfo.output_scanline < s.cinfo.output_height) {
    const int64_t y = s.cinfo.output_scanline;
    JSAMPROW row = cmyk_row != nullptr ? cmyk_row : img.row(y);
    if (jpeg_read_scanlines(&s.cinfo, &row, 1) != 1) {
      std::snprintf(s.message, sizeof s.message, "no progress reading row %lld", static_cast<long long>(y));
      return false;
    }
    if (cmyk_row != nullptr) cmyk_to_rgb(cmyk_row, img.row(y), img.width);
  }
  // No jpeg_finish_decompress: like Pillow, a stream whose pixels are all
  // there is accepted even if its end-of-image marker is missing.
  return true;
}

}  // namespace

DecodedImage decode_jpeg(const uint8_t* data, size_t size) {
  JpegState s;
  s.cinfo.client_data = &s;  // kept by jpeg_create_decompress
  s.cinfo.err = jpeg_std_error(&s.errors);
  s.errors.error_exit = on_error;
  s.errors.emit_message = on_message;
  s.errors.output_message = quiet;
  s.progress.progress_monitor = on_progress;
  if (!read_header(s, data, size)) throw DecodeError(std::string(kFormat) + ": " + s.message);
  const bool cmyk = s.cinfo.jpeg_color_space == JCS_CMYK || s.cinfo.jpeg_color_space == JCS_YCCK;
  s.cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  DecodedImage img = allocate_image(s.cinfo.image_width, s.cinfo.image_height, kFormat);
  std::vector<uint8_t> cmyk_row(cmyk ? static_cast<size_t>(img.width) * 4 : 0);
  if (!read_pixels(s, img, cmyk ? cmyk_row.data() : nullptr))
    throw DecodeError(std::string(kFormat) + ": " + s.message);
  return img;
}

}  // namespace loom::reference::image
