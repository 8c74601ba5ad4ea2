// Windows / OS/2 bitmaps: info headers of 12 (OS/2 1.x), 40, 52, 56, 64
// (OS/2 2.x), 108 and 124 bytes; 1, 4 and 8 bits through a palette
// (uncompressed or RLE), 16, 24 and 32 bits (uncompressed or bit fields);
// rows bottom-up, or top-down for a negative height. As Pillow 9.4 reads
// them (it made ONNX's test data): the palette follows the header; a
// palette index past its end is grey (Pillow's palettes start as a grey
// ramp); 16 bits without masks are 5-5-5; a field of n bits scales to 8 as
// v * 255 / (2^n - 1); alpha is dropped.
#include <cstring>
#include <string>

#include "image/bmp_rle.h"
#include "image/codecs.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "BMP";
constexpr uint32_t kRgb = 0, kRle8 = 1, kRle4 = 2, kBitFields = 3, kAlphaBitFields = 6;

[[noreturn]] void fail(const std::string& why) { throw DecodeError(std::string(kFormat) + ": " + why); }

uint32_t u16(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8; }
uint32_t u32(const uint8_t* p) { return u16(p) | u16(p + 2) << 16; }

struct Header {
  int64_t width = 0, height = 0;
  bool top_down = false;
  uint32_t bits = 0, compression = kRgb, colors = 0;
  uint32_t masks[3] = {0, 0, 0};  // red, green, blue
  size_t palette_at = 0, palette_entry = 4, pixels_at = 0;
};

Header read_header(const uint8_t* d, size_t size) {
  if (size < 18) fail("truncated header");
  Header h;
  h.pixels_at = u32(d + 10);
  const uint32_t header_size = u32(d + 14);
  const bool core = header_size == 12;
  if (!core && header_size != 40 && header_size != 52 && header_size != 56 && header_size != 64 &&
      header_size != 108 && header_size != 124)
    fail("unsupported info header of " + std::to_string(header_size) + " bytes");
  if (size - 14 < header_size) fail("truncated header");
  const uint8_t* info = d + 14;
  h.palette_at = 14 + header_size;
  if (core) {
    h.width = u16(info + 4);
    h.height = u16(info + 6);
    h.bits = u16(info + 10);
    h.palette_entry = 3;
  } else {
    h.width = static_cast<int32_t>(u32(info + 4));
    const int32_t height = static_cast<int32_t>(u32(info + 8));
    h.top_down = height < 0;
    h.height = h.top_down ? -static_cast<int64_t>(height) : height;
    h.bits = u16(info + 14);
    h.compression = u32(info + 16);
    h.colors = u32(info + 32);
    if (h.compression == kBitFields || h.compression == kAlphaBitFields) {
      // A 40-byte header has its masks after it; longer ones hold them.
      if (header_size == 40 || header_size == 64) {
        const size_t n = h.compression == kAlphaBitFields ? 4 : 3;
        if (size < h.palette_at + 4 * n) fail("truncated bit-field masks");
        for (size_t i = 0; i < 3; ++i) h.masks[i] = u32(d + h.palette_at + 4 * i);
        h.palette_at += 4 * n;
      } else {
        for (size_t i = 0; i < 3; ++i) h.masks[i] = u32(info + 40 + 4 * i);
      }
    }
  }
  if (h.width <= 0 || h.height <= 0)
    fail("image of " + std::to_string(h.width) + " x " + std::to_string(h.height) + " pixels");
  return h;
}

// Palette index -> RGB: the file's entries (BGR order) over a grey ramp.
std::vector<uint8_t> read_palette(const uint8_t* d, size_t size, const Header& h) {
  std::vector<uint8_t> rgb(256 * 3);
  for (size_t i = 0; i < 256; ++i) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = static_cast<uint8_t>(i);
  const uint64_t colors = h.colors != 0 ? h.colors : uint64_t{1} << h.bits;
  for (uint64_t i = 0; i < std::min<uint64_t>(colors, 256); ++i) {
    const uint64_t at = h.palette_at + i * h.palette_entry;
    if (at + 3 > size) break;  // a short palette leaves the ramp, as in Pillow
    rgb[3 * i] = d[at + 2];
    rgb[3 * i + 1] = d[at + 1];
    rgb[3 * i + 2] = d[at];
  }
  return rgb;
}

// One colour field of a 16/24/32-bit pixel, scaled to 8 bits.
struct Field {
  uint32_t mask = 0;
  int shift = 0;
  uint64_t max = 0;  // the field's largest value
  explicit Field(uint32_t m) : mask(m) {
    if (m == 0) return;
    shift = __builtin_ctz(m);
    max = m >> shift;
    if ((max & (max + 1)) != 0) fail("bit-field mask " + std::to_string(m) + " is not one run of bits");
  }
  uint8_t operator()(uint32_t px) const {
    if (max == 0) return 0;
    return static_cast<uint8_t>(((px & mask) >> shift) * 255 / max);
  }
};

void decode_indexed(const uint8_t* d, size_t size, const Header& h, int64_t stride, DecodedImage& img) {
  const std::vector<uint8_t> palette = read_palette(d, size, h);
  std::vector<uint8_t> rle;
  if (h.compression == kRle8 || h.compression == kRle4)
    rle = expand_bmp_rle(d, size, h.pixels_at, h.width, h.height, h.compression == kRle4);
  for (int64_t file_row = 0; file_row < h.height; ++file_row) {
    uint8_t* out = img.row(h.top_down ? file_row : h.height - 1 - file_row);
    for (int64_t x = 0; x < h.width; ++x) {
      size_t index = 0;
      if (!rle.empty()) {
        index = rle[static_cast<size_t>(file_row * h.width + x)];
      } else {
        const uint8_t* row = d + h.pixels_at + file_row * stride;
        const int64_t bit = x * h.bits;
        index = (row[bit / 8] >> (8 - h.bits - bit % 8)) & ((1u << h.bits) - 1);
      }
      std::memcpy(out + 3 * x, palette.data() + 3 * index, 3);
    }
  }
}

void decode_direct(const uint8_t* d, const Header& h, int64_t stride, DecodedImage& img) {
  uint32_t masks[3] = {h.masks[0], h.masks[1], h.masks[2]};
  const bool fields = h.compression == kBitFields || h.compression == kAlphaBitFields;
  if (!fields || (masks[0] == 0 && masks[1] == 0 && masks[2] == 0)) {
    if (h.bits == 16) masks[0] = 0x7C00, masks[1] = 0x03E0, masks[2] = 0x001F;
    else masks[0] = 0xFF0000, masks[1] = 0x00FF00, masks[2] = 0x0000FF;
  }
  const Field red(masks[0]), green(masks[1]), blue(masks[2]);
  const int64_t bytes = h.bits / 8;
  for (int64_t file_row = 0; file_row < h.height; ++file_row) {
    const uint8_t* row = d + h.pixels_at + file_row * stride;
    uint8_t* out = img.row(h.top_down ? file_row : h.height - 1 - file_row);
    for (int64_t x = 0; x < h.width; ++x) {
      const uint8_t* p = row + x * bytes;
      uint32_t px = 0;
      for (int64_t b = bytes - 1; b >= 0; --b) px = px << 8 | p[b];
      out[3 * x] = red(px);
      out[3 * x + 1] = green(px);
      out[3 * x + 2] = blue(px);
    }
  }
}

}  // namespace

DecodedImage decode_bmp(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 'B' || data[1] != 'M') fail("no BM signature");
  Header h = read_header(data, size);
  const bool indexed = h.bits == 1 || h.bits == 4 || h.bits == 8;
  if (!indexed && h.bits != 16 && h.bits != 24 && h.bits != 32) fail(std::to_string(h.bits) + " bits per pixel");
  const bool rle = h.compression == kRle8 || h.compression == kRle4;
  if (h.compression != kRgb && h.compression != kBitFields && h.compression != kAlphaBitFields && !rle)
    fail("unsupported compression " + std::to_string(h.compression));
  if (rle && h.bits != (h.compression == kRle8 ? 8u : 4u))
    fail("run-length compression with " + std::to_string(h.bits) + " bits per pixel");
  if ((h.compression == kBitFields || h.compression == kAlphaBitFields) && indexed)
    fail("bit fields with a palette");
  if (h.colors > 65536) fail("palette of " + std::to_string(h.colors) + " colours");
  DecodedImage img = allocate_image(h.width, h.height, kFormat);
  // A header that ends where the palette starts but points its pixels
  // there too: the pixels follow the palette (Pillow does the same).
  if (indexed && h.pixels_at == h.palette_at) {
    const uint64_t colors = h.colors != 0 ? h.colors : uint64_t{1} << h.bits;
    h.pixels_at += static_cast<size_t>(colors * h.palette_entry);
  }
  const int64_t stride = (h.width * h.bits + 31) / 32 * 4;  // width <= 2^28: no overflow
  if (!rle && (h.pixels_at > size || static_cast<uint64_t>(stride * h.height) > size - h.pixels_at))
    fail("truncated: " + std::to_string(h.pixels_at > size ? 0 : size - h.pixels_at) + " bytes of pixel data, " +
         std::to_string(stride * h.height) + " expected");
  if (rle && h.pixels_at > size) fail("pixel data offset past the end of the file");
  if (indexed) decode_indexed(data, size, h, stride, img);
  else decode_direct(data, h, stride, img);
  return img;
}

}  // namespace loom::reference::image
