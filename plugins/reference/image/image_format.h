// The encodings ImageDecoder reads, told apart by their first bytes (the
// stream carries no other type information).
#pragma once

#include <cstddef>
#include <cstdint>

namespace loom::reference::image {

enum class ImageFormat { kUnknown, kJpeg, kPng, kBmp, kPnm, kTiff, kWebp, kJpeg2000 };

// The format whose signature `data` starts with; kUnknown when none does
// (an empty or short stream included).
ImageFormat detect_format(const uint8_t* data, size_t size);

// "JPEG", "PNG", ... for messages.
const char* format_name(ImageFormat format);

}  // namespace loom::reference::image
