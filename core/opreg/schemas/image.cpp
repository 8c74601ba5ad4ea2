// ImageDecoder-20: a 1-D uint8 tensor holding one encoded image (JPEG, PNG,
// BMP, PNM, TIFF, WebP, JPEG 2000) becomes a uint8 [H, W, C] image, C = 3
// for pixel_format "RGB" (the default) or "BGR" and 1 for "Grayscale".
// H and W are known only from the data.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

OpSchema image_decoder() {
  OpSchema s;
  s.SetName("ImageDecoder").SetDomain("").SinceVersion(20).SetDoc("ONNX ImageDecoder (Loom's schema)");
  s.Input(0, "encoded_stream", "", "T1")
      .Output(0, "image", "", "T2")
      .Attr("pixel_format", "'RGB', 'BGR' or 'Grayscale'", AttributeProto::STRING, std::string("RGB"))
      .TypeConstraint("T1", {"tensor(uint8)"}, "")
      .TypeConstraint("T2", {"tensor(uint8)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::updateOutputElemType(ctx, 0, ::onnx::TensorProto::UINT8);
        const auto* in = input_shape(ctx, 0);
        if (in != nullptr && in->dim_size() != 1)
          fail_shape_inference("ImageDecoder: encoded_stream must be 1-D, got rank ", in->dim_size());
        // An unknown pixel_format leaves the channels unknown here; the
        // kernel refuses it with the node's name (a failure in this function
        // only means "less is known": shape_functions.h).
        const std::string format = ::onnx::getAttribute(ctx, "pixel_format", std::string("RGB"));
        ::onnx::TensorShapeProto::Dimension channels;
        if (format == "RGB" || format == "BGR") channels = known_dim(3);
        else if (format == "Grayscale") channels = known_dim(1);
        set_output_dims(ctx, 0, {{}, {}, channels});
      });
  return s;
}

}  // namespace

void add_image_schemas(SchemaList& out) { out.push_back(image_decoder()); }

}  // namespace loom::opreg
