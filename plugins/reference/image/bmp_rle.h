// Run-length encoded BMP pixel data (BI_RLE8, BI_RLE4), expanded to one
// palette index per pixel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loom::reference::image {

// Expands the RLE data at file[offset..size) into width * height indices,
// rows in file order (the caller applies the BMP's row direction). Follows
// Pillow 9.4's decoder: a run past the end of a row is cut there, an
// end-of-line fills the row with index 0, a delta skips pixels as index 0,
// absolute runs are padded to an even file offset. Two places follow the
// format instead, where Pillow 9.4 misreads it: a delta's two bytes are
// read once (Pillow reads four), and an odd RLE4 absolute run keeps its
// last pixel. Throws DecodeError when the data ends (or ends the bitmap)
// before every pixel is set. width * height must already be checked
// (allocate_image).
std::vector<uint8_t> expand_bmp_rle(const uint8_t* file, size_t size, size_t offset, int64_t width, int64_t height,
                                    bool rle4);

}  // namespace loom::reference::image
