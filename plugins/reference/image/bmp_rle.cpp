#include "image/bmp_rle.h"

#include <algorithm>
#include <string>

#include "image/decoded_image.h"

namespace loom::reference::image {

std::vector<uint8_t> expand_bmp_rle(const uint8_t* file, size_t size, size_t offset, int64_t width, int64_t height,
                                    bool rle4) {
  const size_t total = static_cast<size_t>(width * height);
  std::vector<uint8_t> out;
  out.reserve(total);
  size_t p = offset;
  int64_t x = 0;  // Pillow's column count: reset by end-of-line and delta only
  auto fill_zeros = [&](size_t n) { out.insert(out.end(), std::min(n, total - out.size()), uint8_t{0}); };
  while (out.size() < total && p + 2 <= size) {
    const uint8_t count = file[p], value = file[p + 1];
    p += 2;
    if (count != 0) {  // encoded run: `count` pixels of `value` (RLE4: its two nibbles in turn)
      const int64_t n = std::min<int64_t>(count, std::max<int64_t>(0, width - x));
      for (int64_t i = 0; i < n && out.size() < total; ++i)
        out.push_back(rle4 ? (i % 2 == 0 ? value >> 4 : value & 0x0F) : value);
      x += n;
    } else if (value == 0) {  // end of line
      if (out.size() % static_cast<size_t>(width) != 0)
        fill_zeros(static_cast<size_t>(width) - out.size() % static_cast<size_t>(width));
      x = 0;
    } else if (value == 1) {  // end of bitmap
      break;
    } else if (value == 2) {  // delta: right, up (rows move away from the first)
      if (p + 2 > size) break;
      const size_t right = file[p], up = file[p + 1];
      p += 2;
      fill_zeros(right + up * static_cast<size_t>(width));
      x = static_cast<int64_t>(out.size() % static_cast<size_t>(width));
    } else {  // absolute run of `value` pixels
      const size_t bytes = rle4 ? (value + 1u) / 2u : value;
      if (p + bytes > size) break;
      for (size_t i = 0; i < value && out.size() < total; ++i)
        out.push_back(rle4 ? (i % 2 == 0 ? file[p + i / 2] >> 4 : file[p + i / 2] & 0x0F) : file[p + i]);
      p += bytes;
      x += value;
      if (p % 2 != 0) ++p;  // word alignment, counted from the file's start as Pillow does
    }
  }
  if (out.size() < total)
    throw DecodeError("BMP: run-length data ends after " + std::to_string(out.size()) + " of " +
                      std::to_string(total) + " pixels");
  return out;
}

}  // namespace loom::reference::image
