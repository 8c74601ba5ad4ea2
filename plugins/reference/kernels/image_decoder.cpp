// ImageDecoder-20: one encoded image (a 1-D uint8 tensor) to a uint8
// [H, W, C] image. The codecs (image/) decode to RGB as Pillow's
// convert("RGB") does, Pillow being ONNX's reference implementation; here
// "BGR" reverses the channels and "Grayscale" is Pillow's convert("L"):
// (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16. Decoding errors
// (empty, garbage, truncated, too large, a codec this build lacks) fail the
// step with the reason; the host adds the node's name.
#include <algorithm>
#include <string>

#include "image/decode_image.h"
#include "kernel_families.h"

namespace loom::reference {
namespace {

enum class PixelFormat { kRgb, kBgr, kGrayscale };

class ImageDecoder {
 public:
  explicit ImageDecoder(const sdk::Node& node) {
    if (node.has_attr("pixel_format") && node.attr_type("pixel_format") != LOOM_ATTR_STRING)
      sdk::fail_invalid("ImageDecoder: attribute 'pixel_format' must be a string");
    const std::string format = node.attr_string("pixel_format", "RGB");
    if (format == "RGB") format_ = PixelFormat::kRgb;
    else if (format == "BGR") format_ = PixelFormat::kBgr;
    else if (format == "Grayscale") format_ = PixelFormat::kGrayscale;
    else sdk::fail_invalid("ImageDecoder: pixel_format must be 'RGB', 'BGR' or 'Grayscale', got '" + format + "'");
  }

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor in = ctx.required_input(0);
    if (in.dtype() != LOOM_DTYPE_UINT8)
      sdk::fail_invalid("ImageDecoder: encoded_stream must be uint8, got " + sdk::dtype_name(in.dtype()));
    if (in.rank() != 1)
      sdk::fail_invalid("ImageDecoder: encoded_stream must be 1-D, got rank " + std::to_string(in.rank()));
    image::DecodedImage img;
    try {
      img = image::decode_image(in.size() == 0 ? nullptr : in.data<uint8_t>(), static_cast<size_t>(in.size()));
    } catch (const image::DecodeError& e) {
      sdk::fail_invalid(std::string("ImageDecoder: ") + e.what());
    }
    const int64_t channels = format_ == PixelFormat::kGrayscale ? 1 : 3;
    sdk::Tensor out = ctx.output(0, {img.height, img.width, channels}, LOOM_DTYPE_UINT8);
    uint8_t* dst = out.mutable_data<uint8_t>();
    const uint8_t* rgb = img.rgb.data();
    const size_t pixels = static_cast<size_t>(img.height * img.width);
    switch (format_) {
      case PixelFormat::kRgb:
        std::copy(rgb, rgb + 3 * pixels, dst);
        break;
      case PixelFormat::kBgr:
        for (size_t i = 0; i < pixels; ++i) {
          dst[3 * i] = rgb[3 * i + 2];
          dst[3 * i + 1] = rgb[3 * i + 1];
          dst[3 * i + 2] = rgb[3 * i];
        }
        break;
      case PixelFormat::kGrayscale:
        for (size_t i = 0; i < pixels; ++i)
          dst[i] = static_cast<uint8_t>((rgb[3 * i] * 19595u + rgb[3 * i + 1] * 38470u + rgb[3 * i + 2] * 7471u +
                                         0x8000u) >> 16);
        break;
    }
  }

 private:
  PixelFormat format_ = PixelFormat::kRgb;
};

}  // namespace

void register_image_kernels(sdk::KernelRegistry& r) {
  r.add_class<ImageDecoder>("", "ImageDecoder", 20, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
