// Netpbm images: P1 / P4 (bitmap, plain / raw), P2 / P5 (grey) and P3 / P6
// (RGB), maxval 1..65535 (raw samples of two bytes, big-endian, above 255).
// Follows Pillow 9.4, which made the ONNX test data: bitmap 0 is white and
// 1 black; a maxval other than 255 rescales each sample to
// round(v / maxval * 255), rounding half to even as Python's round() does;
// a plain sample above maxval is an error, a raw one is clamped. Above 255
// the same rescaling applies (Pillow 9.4 instead clips 16-bit grey, read as
// 32-bit integers, at 255, and refuses or misreads 16-bit RGB). Comments
// ('#' to the end of the line) may stand wherever whitespace may.
#include <cmath>
#include <string>

#include "image/codecs.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "PNM";

[[noreturn]] void fail(const std::string& why) { throw DecodeError(std::string(kFormat) + ": " + why); }

bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

// Reads the header's numbers and plain-format samples; never past `end`.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  void skip_space_and_comments() {
    while (p_ < end_) {
      if (is_space(*p_)) {
        ++p_;
      } else if (*p_ == '#') {
        while (p_ < end_ && *p_ != '\n' && *p_ != '\r') ++p_;
      } else {
        return;
      }
    }
  }

  // A decimal number of at most `max` after whitespace and comments.
  int64_t number(const char* what, int64_t max) {
    skip_space_and_comments();
    if (p_ == end_) fail(std::string("truncated before the ") + what);
    if (!is_digit(*p_)) fail(std::string("the ") + what + " is not a number");
    int64_t v = 0;
    while (p_ < end_ && is_digit(*p_)) {
      v = v * 10 + (*p_++ - '0');
      if (v > max) fail(std::string("the ") + what + " is over " + std::to_string(max));
    }
    return v;
  }

  // One P1 sample: '0' or '1', separators optional.
  int bit() {
    skip_space_and_comments();
    if (p_ == end_) fail("truncated pixel data");
    if (*p_ != '0' && *p_ != '1') fail("a bitmap sample is not 0 or 1");
    return *p_++ - '0';
  }

  // The single whitespace character between a raw header and its data.
  void end_of_raw_header() {
    if (p_ == end_ || !is_space(*p_)) fail("no whitespace after the header");
    ++p_;
  }

  const uint8_t* position() const { return p_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Pillow's round(v / maxval * 255): the same double arithmetic, ties to even.
uint8_t rescale(uint32_t v, uint32_t maxval) {
  if (maxval == 255) return static_cast<uint8_t>(v);
  if (v >= maxval) return 255;
  const double q = static_cast<double>(v) / maxval * 255.0;
  double whole = std::floor(q);
  const double frac = q - whole;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(whole, 2.0) != 0.0)) whole += 1.0;
  return static_cast<uint8_t>(whole);
}

void put_grey(DecodedImage& img, int64_t i, uint8_t v) {
  uint8_t* px = img.rgb.data() + i * 3;
  px[0] = px[1] = px[2] = v;
}

void decode_bitmap(Reader& in, bool plain, DecodedImage& img) {
  const int64_t w = img.width, h = img.height;
  if (plain) {
    for (int64_t i = 0; i < w * h; ++i) put_grey(img, i, in.bit() ? 0 : 255);
    return;
  }
  const int64_t row_bytes = (w + 7) / 8;
  if (static_cast<uint64_t>(row_bytes * h) > in.remaining())
    fail("truncated: " + std::to_string(in.remaining()) + " bytes of pixel data, " + std::to_string(row_bytes * h) +
         " expected");
  const uint8_t* src = in.position();
  for (int64_t y = 0; y < h; ++y, src += row_bytes)
    for (int64_t x = 0; x < w; ++x) put_grey(img, y * w + x, (src[x / 8] >> (7 - x % 8)) & 1 ? 0 : 255);
}

void decode_samples(Reader& in, bool plain, int channels, uint32_t maxval, DecodedImage& img) {
  const int64_t samples = img.width * img.height * channels;  // <= 3 * kMaxPixels: no overflow
  const int64_t sample_bytes = maxval > 255 ? 2 : 1;
  if (!plain && static_cast<uint64_t>(samples * sample_bytes) > in.remaining())
    fail("truncated: " + std::to_string(in.remaining()) + " bytes of pixel data, " +
         std::to_string(samples * sample_bytes) + " expected");
  const uint8_t* src = in.position();
  for (int64_t i = 0; i < samples; ++i) {
    uint32_t v = 0;
    if (plain) {
      v = static_cast<uint32_t>(in.number("sample", 65535));
      if (v > maxval) fail("sample " + std::to_string(v) + " is over maxval " + std::to_string(maxval));
    } else {
      v = sample_bytes == 2 ? (uint32_t{src[2 * i]} << 8) | src[2 * i + 1] : src[i];
    }
    const uint8_t out = rescale(v, maxval);
    if (channels == 3) img.rgb[static_cast<size_t>(i)] = out;
    else put_grey(img, i, out);
  }
}

}  // namespace

DecodedImage decode_pnm(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 'P' || data[1] < '1' || data[1] > '6') fail("no P1..P6 signature");
  const int kind = data[1] - '0';
  const bool plain = kind <= 3;
  Reader in(data + 2, size - 2);
  constexpr int64_t kMaxDim = int64_t{1} << 40;  // allocate_image applies the real limit
  const int64_t width = in.number("width", kMaxDim);
  const int64_t height = in.number("height", kMaxDim);
  uint32_t maxval = 1;
  if (kind != 1 && kind != 4) {
    maxval = static_cast<uint32_t>(in.number("maxval", 65535));
    if (maxval == 0) fail("maxval is 0");
  }
  if (!plain) in.end_of_raw_header();
  DecodedImage img = allocate_image(width, height, kFormat);
  if (kind == 1 || kind == 4) decode_bitmap(in, plain, img);
  else decode_samples(in, plain, kind == 3 || kind == 6 ? 3 : 1, maxval, img);
  return img;
}

}  // namespace loom::reference::image
