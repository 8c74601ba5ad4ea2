// TIFF through libtiff (4.5 or newer: per-file error handlers), the first
// image of the file, read from memory (TIFFClientOpenExt). Matches Pillow
// 9.4, which made ONNX's test data, where Pillow reads raw samples: 8-bit
// contiguous RGB and grey strips are copied as they are, an associated
// alpha channel is divided out (Pillow's "RGBa"), other alpha dropped.
// Every other layout (tiles, palettes, other depths, YCbCr, CMYK, ...) goes
// through libtiff's TIFFRGBAImage, in the file's own row order (Pillow
// ignores the orientation tag too).
//
// libtiff returns errors rather than jumping; its messages go to this
// file's handlers, never to stderr, and the first one becomes the error.
#include <cstdarg>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <tiffio.h>

#include "image/codecs.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "TIFF";
// libtiff's largest single allocation (strip buffers sized from the header):
// enough for one strip holding a whole image at the pixel limit.
constexpr tmsize_t kMaxTiffAlloc = tmsize_t{1} << 30;

struct TiffSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  std::string error;  // libtiff's first error message
};

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* src = static_cast<TiffSource*>(user);
  if (src->error.empty()) {
    char text[512];
    std::vsnprintf(text, sizeof text, fmt, ap);
    src->error = std::string(module != nullptr ? module : "libtiff") + ": " + text;
  }
  return 1;  // handled: the global handler (stderr) is not called
}

int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

tmsize_t read_proc(thandle_t h, void* buf, tmsize_t n) {
  auto* src = static_cast<TiffSource*>(h);
  if (n <= 0 || src->pos >= src->size) return 0;
  const size_t count = std::min(static_cast<size_t>(n), src->size - src->pos);
  std::memcpy(buf, src->data + src->pos, count);
  src->pos += count;
  return static_cast<tmsize_t>(count);
}

tmsize_t write_proc(thandle_t, void*, tmsize_t) { return -1; }

toff_t seek_proc(thandle_t h, toff_t offset, int whence) {
  auto* src = static_cast<TiffSource*>(h);
  uint64_t base = 0;
  if (whence == SEEK_CUR) base = src->pos;
  else if (whence == SEEK_END) base = src->size;
  else if (whence != SEEK_SET) return static_cast<toff_t>(-1);
  if (offset > UINT64_MAX - base || base + offset > SIZE_MAX) return static_cast<toff_t>(-1);
  src->pos = static_cast<size_t>(base + offset);  // past the end: reads return nothing
  return src->pos;
}

int close_proc(thandle_t) { return 0; }
toff_t size_proc(thandle_t h) { return static_cast<TiffSource*>(h)->size; }
int map_proc(thandle_t, void**, toff_t*) { return 0; }  // no mapping: reads go through read_proc
void unmap_proc(thandle_t, void*, toff_t) {}

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};
struct OptionsFreer {
  void operator()(TIFFOpenOptions* o) const { TIFFOpenOptionsFree(o); }
};

[[noreturn]] void fail(const TiffSource& src, const std::string& what) {
  throw DecodeError(std::string(kFormat) + ": " + what + (src.error.empty() ? "" : " (" + src.error + ")"));
}

template <class T>
T field(TIFF* tif, uint32_t tag, T fallback) {
  T v = fallback;
  return TIFFGetFieldDefaulted(tif, tag, &v) == 1 ? v : fallback;
}

// 8-bit contiguous strips of RGB(+extra) or grey(+extra), row by row.
bool read_samples_directly(TIFF* tif, TiffSource& src, DecodedImage& img, int spp, bool grey) {
  uint16_t extra_count = 0;
  uint16_t* extra = nullptr;
  const bool associated = TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra) == 1 && extra_count > 0 &&
                          spp == (grey ? 2 : 4) && extra[0] == EXTRASAMPLE_ASSOCALPHA;
  const tmsize_t line = TIFFScanlineSize(tif);
  if (line < img.width * spp) fail(src, "scanline of " + std::to_string(line) + " bytes for " + std::to_string(spp) +
                                            " samples x " + std::to_string(img.width) + " pixels");
  std::vector<uint8_t> buf(static_cast<size_t>(line));
  for (int64_t y = 0; y < img.height; ++y) {
    if (TIFFReadScanline(tif, buf.data(), static_cast<uint32_t>(y), 0) < 0) return false;
    uint8_t* out = img.row(y);
    for (int64_t x = 0; x < img.width; ++x, out += 3) {
      const uint8_t* in = buf.data() + x * spp;
      for (int c = 0; c < 3; ++c) out[c] = in[grey ? 0 : c];
      if (!associated || grey) continue;
      const unsigned a = in[3];
      if (a == 255) continue;
      for (int c = 0; c < 3; ++c) out[c] = a == 0 ? 0 : static_cast<uint8_t>(std::min(255u, in[c] * 255u / a));
    }
  }
  return true;
}

// Any layout libtiff's RGBA interface knows, in the file's row order.
DecodedImage read_through_rgba(TIFF* tif, TiffSource& src) {
  char message[1024] = "";
  if (TIFFRGBAImageOK(tif, message) != 1) fail(src, std::string("unsupported layout: ") + message);
  TIFFRGBAImage rgba{};
  if (TIFFRGBAImageBegin(&rgba, tif, 1, message) != 1) fail(src, std::string("cannot read: ") + message);
  struct End {
    TIFFRGBAImage* r;
    ~End() { TIFFRGBAImageEnd(r); }
  } end{&rgba};
  DecodedImage img = allocate_image(rgba.width, rgba.height, kFormat);
  rgba.req_orientation = rgba.orientation;
  std::vector<uint32_t> raster(static_cast<size_t>(img.width * img.height));
  if (TIFFRGBAImageGet(&rgba, raster.data(), rgba.width, rgba.height) != 1) fail(src, "cannot decode the image");
  for (size_t i = 0; i < raster.size(); ++i) {
    img.rgb[3 * i] = static_cast<uint8_t>(TIFFGetR(raster[i]));
    img.rgb[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(raster[i]));
    img.rgb[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(raster[i]));
  }
  return img;
}

}  // namespace

DecodedImage decode_tiff(const uint8_t* data, size_t size) {
  TiffSource src{data, size, 0, {}};
  std::unique_ptr<TIFFOpenOptions, OptionsFreer> options(TIFFOpenOptionsAlloc());
  if (!options) throw DecodeError("TIFF: cannot allocate libtiff options");
  TIFFOpenOptionsSetErrorHandlerExtR(options.get(), on_error, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(options.get(), on_warning, &src);
  TIFFOpenOptionsSetMaxSingleMemAlloc(options.get(), kMaxTiffAlloc);
  // "rm": read, and never map the (caller's) memory.
  std::unique_ptr<TIFF, TiffCloser> tif(TIFFClientOpenExt("ImageDecoder input", "rm", &src, read_proc, write_proc,
                                                          seek_proc, close_proc, size_proc, map_proc, unmap_proc,
                                                          options.get()));
  if (!tif) fail(src, "not a readable TIFF stream");

  const int64_t width = field<uint32_t>(tif.get(), TIFFTAG_IMAGEWIDTH, 0);
  const int64_t height = field<uint32_t>(tif.get(), TIFFTAG_IMAGELENGTH, 0);
  const int spp = field<uint16_t>(tif.get(), TIFFTAG_SAMPLESPERPIXEL, 1);
  const int bits = field<uint16_t>(tif.get(), TIFFTAG_BITSPERSAMPLE, 1);
  const int planar = field<uint16_t>(tif.get(), TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  const int compression = field<uint16_t>(tif.get(), TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  uint16_t photometric = 0;
  const bool has_photometric = TIFFGetField(tif.get(), TIFFTAG_PHOTOMETRIC, &photometric) == 1;
  const bool rgb = has_photometric && photometric == PHOTOMETRIC_RGB && spp >= 3;
  const bool grey = has_photometric && photometric == PHOTOMETRIC_MINISBLACK && spp >= 1 && spp <= 2;
  const bool direct = (rgb || grey) && bits == 8 && planar == PLANARCONFIG_CONTIG && !TIFFIsTiled(tif.get()) &&
                      compression != COMPRESSION_OJPEG;
  if (direct) {
    DecodedImage img = allocate_image(width, height, kFormat);
    if (!read_samples_directly(tif.get(), src, img, spp, grey)) fail(src, "cannot decode the image");
    return img;
  }
  return read_through_rgba(tif.get(), src);
}

}  // namespace loom::reference::image
