// A look at a JPEG 2000 stream's SIZ marker before OpenJPEG reads it.
// OpenJPEG's header reading allocates per tile (kilobytes each) and its
// decoding per pixel, whatever the stream's length: a few hundred bytes can
// declare 65535 tiles or 10^8 pixels. These checks refuse such a stream
// first, with the reason.
#pragma once

#include <cstddef>
#include <cstdint>

namespace loom::reference::image {

// Throws DecodeError when the SIZ marker of `data` (a JP2 file or a bare
// J2K codestream) declares an image over the pixel limit
// (check_image_size) or more tiles than the codestream can hold (each tile
// has at least one tile-part: SOT and SOD, 14 bytes). A stream whose SIZ
// cannot be found is left to OpenJPEG, which reports it.
void check_jpeg2000_header(const uint8_t* data, size_t size);

}  // namespace loom::reference::image
