// One decoder per encoding. Each takes the whole encoded stream, returns an
// RGB image (decoded_image.h) or throws DecodeError; none reads outside
// [data, data + size), writes to stderr or ends the process, whatever the
// bytes. The ones built on a system library are compiled only when CMake
// found that library (LOOM_IMAGE_WITH_<CODEC>); decode_image.cpp says which
// are missing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "image/decoded_image.h"

namespace loom::reference::image {

DecodedImage decode_bmp(const uint8_t* data, size_t size);       // bmp_codec.cpp (own parser)
DecodedImage decode_pnm(const uint8_t* data, size_t size);       // pnm_codec.cpp (own parser)
DecodedImage decode_jpeg(const uint8_t* data, size_t size);      // jpeg_codec.cpp (libjpeg-turbo)
DecodedImage decode_png(const uint8_t* data, size_t size);       // png_codec.cpp (libpng)
DecodedImage decode_tiff(const uint8_t* data, size_t size);      // tiff_codec.cpp (libtiff)
DecodedImage decode_webp(const uint8_t* data, size_t size);      // webp_codec.cpp (libwebp)
DecodedImage decode_jpeg2000(const uint8_t* data, size_t size);  // jpeg2000_codec.cpp (OpenJPEG)

}  // namespace loom::reference::image
