#include "image/decoded_image.h"

namespace loom::reference::image {

void check_image_size(int64_t width, int64_t height, const char* format) {
  const std::string size = std::to_string(width) + " x " + std::to_string(height);
  if (width <= 0 || height <= 0) throw DecodeError(std::string(format) + ": image of " + size + " pixels");
  // The product is formed only once both are at most kMaxPixels (2^28):
  // it is then below 2^56, no overflow.
  if (width > kMaxPixels || height > kMaxPixels || width * height > kMaxPixels)
    throw DecodeError(std::string(format) + ": image of " + size + " pixels is over the limit of " +
                      std::to_string(kMaxPixels) + " pixels");
}

DecodedImage allocate_image(int64_t width, int64_t height, const char* format) {
  check_image_size(width, height, format);
  DecodedImage out;
  out.width = width;
  out.height = height;
  out.rgb.assign(static_cast<size_t>(width * height * 3), 0);
  return out;
}

}  // namespace loom::reference::image
