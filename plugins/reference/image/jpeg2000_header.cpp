#include "image/jpeg2000_header.h"

#include <cstring>
#include <string>

#include "image/decoded_image.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "JPEG 2000";
constexpr uint64_t kMinTileBytes = 14;  // SOT (12) + SOD (2)

uint32_t be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// The codestream inside a JP2 file: the contents of its 'jp2c' box, or
// null when there is none (or the boxes are broken). Sets `length`.
const uint8_t* find_codestream(const uint8_t* data, size_t size, size_t& length) {
  size_t at = 0;
  while (size - at >= 8) {
    uint64_t box = be32(data + at);
    size_t header = 8;
    if (box == 1) {  // a 64-bit length follows the type
      if (size - at < 16) return nullptr;
      box = uint64_t{be32(data + at + 8)} << 32 | be32(data + at + 12);
      header = 16;
    } else if (box == 0) {  // up to the end of the file
      box = size - at;
    }
    if (box < header || box > size - at) return nullptr;
    if (std::memcmp(data + at + 4, "jp2c", 4) == 0) {
      length = static_cast<size_t>(box - header);
      return data + at + header;
    }
    at += static_cast<size_t>(box);
  }
  return nullptr;
}

}  // namespace

void check_jpeg2000_header(const uint8_t* data, size_t size) {
  size_t length = size;
  const uint8_t* cs = data;
  if (!(size >= 4 && std::memcmp(data, "\xFF\x4F\xFF\x51", 4) == 0)) cs = find_codestream(data, size, length);
  // SOC, then SIZ up to YTOsiz: 40 bytes.
  if (cs == nullptr || length < 40 || std::memcmp(cs, "\xFF\x4F\xFF\x51", 4) != 0) return;
  const uint64_t x1 = be32(cs + 8), y1 = be32(cs + 12), x0 = be32(cs + 16), y0 = be32(cs + 20);
  const uint64_t tile_w = be32(cs + 24), tile_h = be32(cs + 28), tile_x0 = be32(cs + 32), tile_y0 = be32(cs + 36);
  if (x1 <= x0 || y1 <= y0 || tile_w == 0 || tile_h == 0 || tile_x0 > x0 || tile_y0 > y0) return;  // OpenJPEG's to refuse
  check_image_size(static_cast<int64_t>(x1 - x0), static_cast<int64_t>(y1 - y0), kFormat);
  const uint64_t tiles = ((x1 - tile_x0 + tile_w - 1) / tile_w) * ((y1 - tile_y0 + tile_h - 1) / tile_h);
  if (tiles > length / kMinTileBytes)
    throw DecodeError(std::string(kFormat) + ": the header declares " + std::to_string(tiles) +
                      " tiles, more than a codestream of " + std::to_string(length) + " bytes can hold");
}

}  // namespace loom::reference::image
