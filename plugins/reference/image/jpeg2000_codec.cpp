// JPEG 2000 (a JP2 file or a bare J2K codestream) through OpenJPEG, read
// from memory. One component is grey, two grey + alpha, three RGB, four
// RGB + alpha (alpha dropped), as in Pillow 9.4, which made ONNX's test
// data; each sample is made unsigned (signed ones offset by half their
// range) and shifted to 8 bits as Pillow's j2ku_shift does, then clamped.
// YCC and CMYK colour spaces and subsampled components are refused, and so
// is a header declaring more than the stream can hold (jpeg2000_header.h).
// OpenJPEG's messages go to handlers that keep the first error, never to
// stderr.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <openjpeg.h>

#include "image/codecs.h"
#include "image/jpeg2000_header.h"

namespace loom::reference::image {
namespace {

constexpr const char* kFormat = "JPEG 2000";

struct J2kSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  std::string error;  // OpenJPEG's first error message
};

OPJ_SIZE_T read_fn(void* buf, OPJ_SIZE_T n, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (src->pos >= src->size) return static_cast<OPJ_SIZE_T>(-1);  // end of stream
  const size_t count = std::min<size_t>(n, src->size - src->pos);
  std::memcpy(buf, src->data + src->pos, count);
  src->pos += count;
  return count;
}

// Moves by n bytes within [0, size] (src->pos never leaves it); returns
// how far it moved, or -1 when it cannot move at all.
OPJ_OFF_T skip_fn(OPJ_OFF_T n, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (n < 0) {
    if (static_cast<uint64_t>(-n) > src->pos) return -1;
    src->pos -= static_cast<size_t>(-n);
    return n;
  }
  const size_t moved = std::min<uint64_t>(static_cast<uint64_t>(n), src->size - src->pos);
  if (moved == 0 && n > 0) return -1;
  src->pos += moved;
  return static_cast<OPJ_OFF_T>(moved);
}

OPJ_BOOL seek_fn(OPJ_OFF_T to, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (to < 0 || static_cast<uint64_t>(to) > src->size) return OPJ_FALSE;
  src->pos = static_cast<size_t>(to);
  return OPJ_TRUE;
}

void on_error(const char* message, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (src->error.empty()) {
    src->error = message;
    while (!src->error.empty() && src->error.back() == '\n') src->error.pop_back();
  }
}

void quiet(const char*, void*) {}

struct CodecCloser {
  void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
};
struct StreamCloser {
  void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
};
struct ImageCloser {
  void operator()(opj_image_t* i) const { opj_image_destroy(i); }
};

[[noreturn]] void fail(const J2kSource& src, const std::string& what) {
  throw DecodeError(std::string(kFormat) + ": " + what + (src.error.empty() ? "" : " (" + src.error + ")"));
}

// A sample of `prec` bits (signed or not) to 8 bits, as Pillow shifts it.
uint8_t to_byte(int32_t v, const opj_image_comp_t& c) {
  int64_t u = v;
  if (c.sgnd) u += int64_t{1} << (c.prec - 1);
  u = c.prec >= 8 ? u >> (c.prec - 8) : u << (8 - c.prec);
  return static_cast<uint8_t>(std::clamp<int64_t>(u, 0, 255));
}

}  // namespace

DecodedImage decode_jpeg2000(const uint8_t* data, size_t size) {
  check_jpeg2000_header(data, size);
  J2kSource src{data, size, 0, {}};
  const bool codestream = size >= 4 && std::memcmp(data, "\xFF\x4F\xFF\x51", 4) == 0;
  std::unique_ptr<opj_codec_t, CodecCloser> codec(opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2));
  if (!codec) fail(src, "cannot create a decoder");
  opj_set_error_handler(codec.get(), on_error, &src);
  opj_set_warning_handler(codec.get(), quiet, &src);
  opj_set_info_handler(codec.get(), quiet, &src);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  if (!opj_setup_decoder(codec.get(), &params)) fail(src, "cannot set up the decoder");

  std::unique_ptr<opj_stream_t, StreamCloser> stream(opj_stream_create(64 * 1024, OPJ_TRUE));
  if (!stream) fail(src, "cannot create a stream");
  opj_stream_set_user_data(stream.get(), &src, nullptr);
  opj_stream_set_user_data_length(stream.get(), size);
  opj_stream_set_read_function(stream.get(), read_fn);
  opj_stream_set_skip_function(stream.get(), skip_fn);
  opj_stream_set_seek_function(stream.get(), seek_fn);

  opj_image_t* raw = nullptr;
  const bool header_ok = opj_read_header(stream.get(), codec.get(), &raw);
  std::unique_ptr<opj_image_t, ImageCloser> image(raw);
  if (!header_ok || !image) fail(src, "cannot read the header");
  if (image->numcomps < 1 || image->numcomps > 4)
    fail(src, std::to_string(image->numcomps) + " components (1 to 4 are supported)");
  if (image->color_space == OPJ_CLRSPC_SYCC || image->color_space == OPJ_CLRSPC_EYCC ||
      image->color_space == OPJ_CLRSPC_CMYK)
    fail(src, "colour space " + std::to_string(image->color_space) + " (YCC / CMYK) is not supported");
  for (OPJ_UINT32 i = 0; i < image->numcomps; ++i) {
    const opj_image_comp_t& c = image->comps[i];
    if (c.dx != 1 || c.dy != 1) fail(src, "subsampled components are not supported");
    if (c.prec < 1 || c.prec > 31) fail(src, "component precision of " + std::to_string(c.prec) + " bits");
  }
  // Checked before decoding, which allocates every component at full size.
  DecodedImage img = allocate_image(int64_t{image->x1} - image->x0, int64_t{image->y1} - image->y0, kFormat);
  if (!opj_decode(codec.get(), stream.get(), image.get()) || !opj_end_decompress(codec.get(), stream.get()))
    fail(src, "cannot decode the image (corrupt or truncated)");

  const OPJ_UINT32 colour = image->numcomps >= 3 ? 3 : 1;
  for (OPJ_UINT32 i = 0; i < colour; ++i) {
    const opj_image_comp_t& c = image->comps[i];
    if (c.data == nullptr || c.w != img.width || c.h != img.height)
      fail(src, "component " + std::to_string(i) + " is " + std::to_string(c.w) + " x " + std::to_string(c.h) +
                    ", the image " + std::to_string(img.width) + " x " + std::to_string(img.height));
  }
  const size_t pixels = static_cast<size_t>(img.width * img.height);
  for (size_t p = 0; p < pixels; ++p)
    for (size_t ch = 0; ch < 3; ++ch) {
      const opj_image_comp_t& c = image->comps[colour == 3 ? ch : 0];
      img.rgb[3 * p + ch] = to_byte(c.data[p], c);
    }
  return img;
}

}  // namespace loom::reference::image
