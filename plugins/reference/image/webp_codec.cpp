// WebP (lossy, lossless, with or without alpha) through libwebp, decoded
// straight into RGB: alpha dropped, as Pillow's convert("RGB") does. For a
// still image this is the same as Pillow's decoder (libwebp's animation
// decoder, whose first frame is decoded without blending). Animated files
// are refused rather than reduced to their first frame.
#include <string>

#include <webp/decode.h>

#include "image/codecs.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "WebP";

[[noreturn]] void fail(const std::string& why) { throw DecodeError(std::string(kFormat) + ": " + why); }

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)";
    default: return "error";
  }
}

}  // namespace

DecodedImage decode_webp(const uint8_t* data, size_t size) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(data, size, &features);
  if (status != VP8_STATUS_OK) fail(std::string("cannot read the header: ") + status_text(status));
  if (features.has_animation) fail("animated images are not supported");
  DecodedImage img = allocate_image(features.width, features.height, kFormat);
  const int stride = static_cast<int>(img.width * 3);  // width <= 16383 in WebP
  if (WebPDecodeRGBInto(data, size, img.rgb.data(), img.rgb.size(), stride) == nullptr)
    fail("cannot decode the image (corrupt or truncated)");
  return img;
}

}  // namespace loom::reference::image
