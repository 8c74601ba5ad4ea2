// ImageDecoder-20 on the reference EP: each codec's conversion to RGB, BGR
// and Grayscale against Pillow 9.4 (ONNX's reference implementation, whose
// output the 1.23 test data holds), and the near misses a hostile stream
// brings (empty, garbage, garbage after a real signature, truncated, huge
// declared dimensions, a bad pixel_format), each refused with the node's
// name and a reason, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "unit/reference/image_fixtures.h"
#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::OneNodeModel;
namespace fx = testing::image_fixtures;
using Bytes = std::vector<uint8_t>;

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }
Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs one ImageDecoder node (named "under_test") on `encoded`; an empty
// `pixel_format` leaves the attribute out.
Expected<std::vector<Tensor>> decode(const Bytes& encoded, const std::string& pixel_format = "") {
  OneNodeModel g("ImageDecoder", 20,
                 {{"encoded", Tensor::from_vector(DType::kUint8, {static_cast<int64_t>(encoded.size())}, encoded)}},
                 {{"image", TensorProto::UINT8}});
  if (!pixel_format.empty()) g.attr("pixel_format", pixel_format);
  return g.run();
}

// The decoded image's dims and bytes, or a failure naming the error.
struct Image {
  Dims dims;
  Bytes pixels;
};
Image decoded(const Bytes& encoded, const std::string& pixel_format = "") {
  auto out = decode(encoded, pixel_format);
  if (!out.has_value()) {
    ADD_FAILURE() << "decoding failed: " << out.status().message();
    return {};
  }
  const Tensor& t = (*out)[0];
  EXPECT_EQ(t.dtype(), DType::kUint8);
  const auto* p = t.data_as<uint8_t>();
  return {t.dims(), Bytes(p, p + t.element_count())};
}

// The error a stream is refused with; it must name the node.
std::string refusal(const Bytes& encoded, const std::string& pixel_format = "") {
  auto out = decode(encoded, pixel_format);
  if (out.has_value()) {
    ADD_FAILURE() << "a stream of " << encoded.size() << " bytes was decoded";
    return {};
  }
  const std::string message = out.status().message();
  EXPECT_NE(message.find("under_test"), std::string::npos) << message;
  return message;
}

// `encoded` is refused, naming the node, with `reason` in the message.
void expect_refused(const Bytes& encoded, const std::string& reason) {
  const std::string message = refusal(encoded);
  EXPECT_NE(message.find(reason), std::string::npos) << "expected '" << reason << "' in: " << message;
}

void put16(Bytes& b, size_t at, uint32_t v) {
  b[at] = v & 0xFF;
  b[at + 1] = (v >> 8) & 0xFF;
}
void put32(Bytes& b, size_t at, uint32_t v) {
  put16(b, at, v & 0xFFFF);
  put16(b, at + 2, v >> 16);
}

// A BMP with a 40-byte info header: `pixels` is the raw pixel data (rows
// already padded to 4 bytes), `extra` the masks and / or palette after
// the header (`colors` palette entries of 4 bytes).
Bytes bmp(int32_t width, int32_t height, uint16_t bits, uint32_t compression, const Bytes& extra, uint32_t colors,
          const Bytes& pixels) {
  Bytes b(54, 0);
  b[0] = 'B';
  b[1] = 'M';
  put32(b, 2, static_cast<uint32_t>(54 + extra.size() + pixels.size()));
  put32(b, 10, static_cast<uint32_t>(54 + extra.size()));
  put32(b, 14, 40);
  put32(b, 18, static_cast<uint32_t>(width));
  put32(b, 22, static_cast<uint32_t>(height));
  put16(b, 26, 1);
  put16(b, 28, bits);
  put32(b, 30, compression);
  put32(b, 34, static_cast<uint32_t>(pixels.size()));
  put32(b, 46, colors);
  return b + extra + pixels;
}

// The three BGRX entries (10,20,30) (40,50,60) (70,80,90) as RGB.
const Bytes kPalette = {30, 20, 10, 0, 60, 50, 40, 0, 90, 80, 70, 0};

uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

Bytes be32(uint32_t v) { return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}; }

Bytes png_chunk(const std::string& type, const Bytes& data) {
  const Bytes body = text(type) + data;
  return be32(static_cast<uint32_t>(data.size())) + body + be32(crc32(body.data(), body.size()));
}

// A PNG signature, an IHDR chunk (8-bit RGB) and an empty IDAT, with
// correct CRCs: enough for libpng to read the header.
Bytes png_header(uint32_t width, uint32_t height) {
  return text("\x89PNG\r\n\x1A\n") + png_chunk("IHDR", be32(width) + be32(height) + Bytes{8, 2, 0, 0, 0}) +
         png_chunk("IDAT", {});
}

// A J2K codestream's SOC and SIZ marker (one 8-bit component): an image of
// width x height in tiles of tile x tile, then `padding` zero bytes.
Bytes j2k_header(uint32_t width, uint32_t height, uint32_t tile, size_t padding) {
  return Bytes{0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0, 0} + be32(width) + be32(height) + be32(0) + be32(0) + be32(tile) +
         be32(tile) + be32(0) + be32(0) + Bytes{0, 1, 7, 1, 1} + Bytes(padding, 0);
}

TEST(ImageDecoderTest, PngInRgbBgrAndGrayscale) {
  const Image rgb = decoded(fx::kPngRgb3x2);
  EXPECT_EQ(rgb.dims, (Dims{2, 3, 3}));
  EXPECT_EQ(rgb.pixels, (Bytes{255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 200, 100, 50, 255, 255, 255}));
  EXPECT_EQ(decoded(fx::kPngRgb3x2, "RGB").pixels, rgb.pixels);  // the default, spelled out
  const Image bgr = decoded(fx::kPngRgb3x2, "BGR");
  EXPECT_EQ(bgr.dims, (Dims{2, 3, 3}));
  EXPECT_EQ(bgr.pixels, (Bytes{0, 0, 255, 0, 255, 0, 255, 0, 0, 30, 20, 10, 50, 100, 200, 255, 255, 255}));
  const Image grey = decoded(fx::kPngRgb3x2, "Grayscale");
  EXPECT_EQ(grey.dims, (Dims{2, 3, 1}));
  EXPECT_EQ(grey.pixels, (Bytes{76, 150, 29, 18, 124, 255}));  // Pillow's convert("L")
}

TEST(ImageDecoderTest, PngGreyAlphaAndPaletteBecomeRgb) {
  EXPECT_EQ(decoded(fx::kPngGreyAlpha2x1).pixels, (Bytes{7, 7, 7, 200, 200, 200}));  // alpha dropped, not blended
  const Image palette = decoded(fx::kPngPalette2x2);
  EXPECT_EQ(palette.dims, (Dims{2, 2, 3}));
  EXPECT_EQ(palette.pixels, (Bytes{1, 2, 3, 250, 240, 230, 250, 240, 230, 1, 2, 3}));
  EXPECT_EQ(decoded(fx::kPngPalette2x2, "Grayscale").pixels, (Bytes{2, 242, 242, 2}));
}

TEST(ImageDecoderTest, JpegMatchesPillowByteForByte) {
  const Image rgb = decoded(fx::kJpegRgb8x8);
  EXPECT_EQ(rgb.dims, (Dims{8, 8, 3}));
  EXPECT_EQ(rgb.pixels, fx::kJpegRgb8x8Pixels);
  const Image grey = decoded(fx::kJpegRgb8x8, "Grayscale");
  EXPECT_EQ(grey.dims, (Dims{8, 8, 1}));
  EXPECT_EQ(grey.pixels, fx::kJpegRgb8x8Grey);
  const Image cmyk = decoded(fx::kJpegCmyk8x8);
  EXPECT_EQ(cmyk.dims, (Dims{8, 8, 3}));
  EXPECT_EQ(cmyk.pixels, fx::kJpegCmyk8x8Pixels);
}

TEST(ImageDecoderTest, PnmPlainRawAndRescaled) {
  // maxval 100: round(v / 100 * 255), halves to even, as Pillow.
  const Bytes scaled = {0, 128, 255, 255, 252, 3};
  EXPECT_EQ(decoded(text("P6\n2 1\n100\n") + Bytes{0, 50, 100, 100, 99, 1}).pixels, scaled);
  EXPECT_EQ(decoded(text("P3\n# a comment\n2 1\n100\n0 50 100\n100 99 1\n")).pixels, scaled);
  const Image p2 = decoded(text("P2 2 1 10 3 10\n"));  // 3 / 10 * 255 = 76.5: to even
  EXPECT_EQ(p2.dims, (Dims{1, 2, 3}));
  EXPECT_EQ(p2.pixels, (Bytes{76, 76, 76, 255, 255, 255}));
  const Bytes bits = {255, 255, 255, 0, 0, 0, 255, 255, 255};  // 1 is black
  EXPECT_EQ(decoded(text("P1\n3 1\n010\n")).pixels, bits);
  EXPECT_EQ(decoded(text("P4\n3 1\n") + Bytes{0x40}).pixels, bits);
  EXPECT_EQ(decoded(text("P5\n2 1\n1000\n") + Bytes{0, 0, 3, 232}, "Grayscale").pixels, (Bytes{0, 255}));
  expect_refused(text("P3\n1 1\n100\n0 50 101\n"), "over maxval");
  expect_refused(text("P6\n2 1\n255\n") + Bytes{1, 2, 3, 4}, "truncated");
  expect_refused(text("P5\n1 1\n0\n") + Bytes{0}, "maxval is 0");
}

TEST(ImageDecoderTest, BmpLayouts) {
  // 24 bits, bottom-up: the first row in the file is the bottom one.
  const Image bottom_up = decoded(bmp(1, 2, 24, 0, {}, 0, {1, 2, 3, 0, 4, 5, 6, 0}));
  EXPECT_EQ(bottom_up.dims, (Dims{2, 1, 3}));
  EXPECT_EQ(bottom_up.pixels, (Bytes{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(decoded(bmp(1, -2, 24, 0, {}, 0, {1, 2, 3, 0, 4, 5, 6, 0})).pixels, (Bytes{3, 2, 1, 6, 5, 4}));
  // 8-bit palette; index 5 is past its 3 entries: grey, as in Pillow.
  EXPECT_EQ(decoded(bmp(4, 1, 8, 0, kPalette, 3, {0, 1, 2, 5})).pixels,
            (Bytes{10, 20, 30, 40, 50, 60, 70, 80, 90, 5, 5, 5}));
  // 16 bits: 5-5-5 without masks, 5-6-5 with them; fields scale by 255 / max.
  const Bytes px555 = {0x20, 0x7C, 0xFE, 0x3F};  // (31, 1, 0) (15, 31, 30)
  EXPECT_EQ(decoded(bmp(2, 1, 16, 0, {}, 0, px555)).pixels, (Bytes{255, 8, 0, 123, 255, 246}));
  const Bytes masks565 = {0x00, 0xF8, 0, 0, 0xE0, 0x07, 0, 0, 0x1F, 0, 0, 0};
  const Bytes px565 = {0x20, 0xF8, 0xFE, 0x7F};  // (31, 1, 0) (15, 63, 30)
  EXPECT_EQ(decoded(bmp(2, 1, 16, 3, masks565, 0, px565)).pixels, (Bytes{255, 4, 0, 123, 255, 246}));
  // 32 bits: BGRX.
  EXPECT_EQ(decoded(bmp(2, 1, 32, 0, {}, 0, {1, 2, 3, 4, 5, 6, 7, 8})).pixels, (Bytes{3, 2, 1, 7, 6, 5}));
  // RLE8: a run of four 2s, end of line; an absolute run 0 1 2 (padded),
  // one 5, end of bitmap.
  const Bytes rle = {4, 2, 0, 0, 0, 3, 0, 1, 2, 0, 1, 5, 0, 1};
  EXPECT_EQ(decoded(bmp(4, 2, 8, 1, kPalette, 3, rle)).pixels,
            (Bytes{10, 20, 30, 40, 50, 60, 70, 80, 90, 5, 5, 5, 70, 80, 90, 70, 80, 90, 70, 80, 90, 70, 80, 90}));
  expect_refused(bmp(4, 2, 8, 1, kPalette, 3, {4, 2, 0, 1}), "run-length data ends");
  expect_refused(bmp(2, 2, 24, 0, {}, 0, {1, 2, 3}), "truncated");
  expect_refused(bmp(2, 2, 7, 0, {}, 0, Bytes(16, 0)), "7 bits per pixel");
}

TEST(ImageDecoderTest, EmptyStreamIsRefused) { expect_refused(Bytes{}, "empty"); }

TEST(ImageDecoderTest, GarbageIsRefused) {
  std::mt19937 rng(7);
  Bytes garbage(4096);
  for (auto& b : garbage) b = static_cast<uint8_t>(rng());
  garbage[0] = 'x';  // no signature
  expect_refused(garbage, "not in a known image format");
}

TEST(ImageDecoderTest, GarbageAfterEachSignatureIsRefused) {
  struct Case {
    const char* format;
    Bytes signature;
  };
  const std::vector<Case> cases = {
      {"JPEG", {0xFF, 0xD8, 0xFF}},
      {"PNG", text("\x89PNG\r\n\x1A\n")},
      {"BMP", text("BM")},
      {"PNM", text("P6 ")},
      {"TIFF", {'I', 'I', 42, 0}},
      {"TIFF", {'M', 'M', 0, 42}},
      {"WebP", text("RIFF") + Bytes{0xF0, 0, 0, 0} + text("WEBP")},
      {"JPEG 2000", Bytes{0, 0, 0, 12} + text("jP  \r\n\x87\n")},
      {"JPEG 2000", {0xFF, 0x4F, 0xFF, 0x51}},
  };
  std::mt19937 rng(11);
  for (const Case& c : cases)
    for (size_t length : {size_t{0}, size_t{7}, size_t{300}}) {
      Bytes tail(length);
      for (auto& b : tail) b = static_cast<uint8_t>(rng());
      const std::string message = refusal(c.signature + tail);
      EXPECT_NE(message.find(std::string(c.format) + ":"), std::string::npos)
          << c.format << " + " << length << " random bytes: " << message;
    }
}

TEST(ImageDecoderTest, TruncatedJpegAndPngAreRefused) {
  const Bytes jpeg(fx::kJpegRgb8x8.begin(), fx::kJpegRgb8x8.begin() + fx::kJpegRgb8x8.size() / 2);
  expect_refused(jpeg, "JPEG: Premature end of JPEG file");
  const Bytes png(fx::kPngRgb3x2.begin(), fx::kPngRgb3x2.begin() + fx::kPngRgb3x2.size() / 2);
  expect_refused(png, "PNG: truncated data");
}

TEST(ImageDecoderTest, HugeDeclaredDimensionsAreRefusedBeforeAllocating) {
  expect_refused(bmp(100000, 100000, 24, 0, {}, 0, Bytes(64, 0)),
                 "BMP: image of 100000 x 100000 pixels is over the limit");
  expect_refused(bmp(100000, -100000, 8, 0, kPalette, 3, Bytes(64, 0)), "over the limit");
  expect_refused(text("P6\n100000 100000\n255\n") + Bytes(64, 0),
                 "PNM: image of 100000 x 100000 pixels is over the limit");
  expect_refused(text("P6\n99999999999999999999 1\n255\n"), "PNM: the width is over");
  expect_refused(png_header(100000, 100000), "PNG: image of 100000 x 100000 pixels is over the limit");
  expect_refused(bmp(0, 5, 24, 0, {}, 0, {}), "BMP: image of 0 x 5 pixels");
  expect_refused(j2k_header(100000, 100000, 100000, 200),
                 "JPEG 2000: image of 100000 x 100000 pixels is over the limit");
  // 4096 x 4096 in 16 x 16 tiles: 65536 tiles, which need 14 bytes each.
  expect_refused(j2k_header(4096, 4096, 16, 200), "JPEG 2000: the header declares 65536 tiles");
}

TEST(ImageDecoderTest, InvalidPixelFormatIsRefused) {
  for (const char* format : {"RGBA", "rgb", "L"}) {
    const std::string message = refusal(fx::kPngRgb3x2, format);
    EXPECT_NE(message.find("pixel_format must be 'RGB', 'BGR' or 'Grayscale', got '" + std::string(format) + "'"),
              std::string::npos)
        << message;
  }
}

TEST(ImageDecoderTest, InputMustBeOneDimensional) {
  OneNodeModel g("ImageDecoder", 20, {{"encoded", Tensor::from_vector(DType::kUint8, {2, 2}, Bytes{'B', 'M', 0, 0})}},
                 {{"image", TensorProto::UINT8}});
  auto out = g.run();
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("1-D"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace loom
