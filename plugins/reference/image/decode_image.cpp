#include "image/decode_image.h"

#include <string>

#include "image/codecs.h"
#include "image/image_format.h"

namespace loom::reference::image {
namespace {

// A codec whose library was not found when Loom was configured.
[[noreturn, maybe_unused]] void missing(const char* format, const char* library) {
  throw DecodeError(std::string(format) + " decoding is not available: this build of Loom was configured without " +
                    library);
}

}  // namespace

DecodedImage decode_image(const uint8_t* data, size_t size) {
  if (size == 0) throw DecodeError("the encoded stream is empty");
  switch (detect_format(data, size)) {
    case ImageFormat::kBmp: return decode_bmp(data, size);
    case ImageFormat::kPnm: return decode_pnm(data, size);
    case ImageFormat::kJpeg:
#ifdef LOOM_IMAGE_WITH_JPEG
      return decode_jpeg(data, size);
#else
      missing("JPEG", "libjpeg");
#endif
    case ImageFormat::kPng:
#ifdef LOOM_IMAGE_WITH_PNG
      return decode_png(data, size);
#else
      missing("PNG", "libpng");
#endif
    case ImageFormat::kTiff:
#ifdef LOOM_IMAGE_WITH_TIFF
      return decode_tiff(data, size);
#else
      missing("TIFF", "libtiff (4.5 or newer)");
#endif
    case ImageFormat::kWebp:
#ifdef LOOM_IMAGE_WITH_WEBP
      return decode_webp(data, size);
#else
      missing("WebP", "libwebp");
#endif
    case ImageFormat::kJpeg2000:
#ifdef LOOM_IMAGE_WITH_JPEG2000
      return decode_jpeg2000(data, size);
#else
      missing("JPEG 2000", "OpenJPEG");
#endif
    case ImageFormat::kUnknown: break;
  }
  throw DecodeError("the encoded stream is not in a known image format (JPEG, PNG, BMP, PNM, TIFF, WebP, JPEG 2000)");
}

}  // namespace loom::reference::image
