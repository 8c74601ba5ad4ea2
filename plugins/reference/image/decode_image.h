// Decodes one encoded image of any format ImageDecoder knows, chosen by its
// signature (image_format.h), to 8-bit RGB.
#pragma once

#include <cstddef>
#include <cstdint>

#include "image/decoded_image.h"

namespace loom::reference::image {

// Throws DecodeError for an empty stream, an unknown signature, a codec this
// build lacks, or a stream its codec refuses.
DecodedImage decode_image(const uint8_t* data, size_t size);

}  // namespace loom::reference::image
