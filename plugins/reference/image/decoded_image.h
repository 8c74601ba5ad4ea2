// What every codec of ImageDecoder returns: an 8-bit RGB image, rows top to
// bottom, pixels left to right, no padding. Codecs convert what they decode
// (grey, palette, alpha, CMYK, more than 8 bits) to it the way Pillow's
// convert("RGB") does, since ONNX's reference implementation is Pillow.
//
// Codecs report a bad stream by throwing DecodeError with the reason; the
// kernel adds the op's name (and the host the node's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::reference::image {

class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most pixels an image may have (about 268 million: 768 MiB as RGB).
// A header may declare any size; this is refused before anything of that
// size is allocated. A fuzzing build may lower it (a few hundred bytes of
// JPEG 2000 can declare 10^8 pixels, each a slow but valid decode).
#ifdef LOOM_IMAGE_MAX_PIXELS
inline constexpr int64_t kMaxPixels = LOOM_IMAGE_MAX_PIXELS;
#else
inline constexpr int64_t kMaxPixels = int64_t{1} << 28;
#endif

struct DecodedImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> rgb;  // height * width * 3 bytes

  uint8_t* row(int64_t y) { return rgb.data() + static_cast<size_t>(y * width * 3); }
};

// Throws unless `width` and `height` are positive and their product is at
// most kMaxPixels. `format` names the codec in the error ("PNG: image of
// 0 x 5 pixels").
void check_image_size(int64_t width, int64_t height, const char* format);

// An image of `width` x `height` with its pixels allocated (zero), after
// check_image_size.
DecodedImage allocate_image(int64_t width, int64_t height, const char* format);

}  // namespace loom::reference::image
