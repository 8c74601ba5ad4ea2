#include "image/image_format.h"

#include <cstring>

namespace loom::reference::image {
namespace {

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t n) {
  return size >= n && std::memcmp(data, magic, n) == 0;
}

bool is_pnm_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

ImageFormat detect_format(const uint8_t* data, size_t size) {
  if (data == nullptr) return ImageFormat::kUnknown;
  if (starts_with(data, size, "\xFF\xD8\xFF", 3)) return ImageFormat::kJpeg;
  if (starts_with(data, size, "\x89PNG\r\n\x1A\n", 8)) return ImageFormat::kPng;
  if (starts_with(data, size, "BM", 2)) return ImageFormat::kBmp;
  // P1..P6 then whitespace or a comment: netpbm's magic numbers.
  if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' && (is_pnm_space(data[2]) || data[2] == '#'))
    return ImageFormat::kPnm;
  // Classic TIFF and BigTIFF, little- and big-endian.
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4) ||
      starts_with(data, size, "II+\0", 4) || starts_with(data, size, "MM\0+", 4))
    return ImageFormat::kTiff;
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0)
    return ImageFormat::kWebp;
  // The JP2 file signature box, or a bare J2K codestream (SOC then SIZ).
  if (starts_with(data, size, "\0\0\0\x0CjP  \r\n\x87\n", 12) || starts_with(data, size, "\xFF\x4F\xFF\x51", 4))
    return ImageFormat::kJpeg2000;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kPnm: return "PNM";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kJpeg2000: return "JPEG 2000";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

}  // namespace loom::reference::image
