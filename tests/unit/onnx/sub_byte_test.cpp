// ONNX's packed storage of the sub-byte types (onnx/sub_byte.h) and the
// TensorProto reader and writer on it: raw_data and int32_data unpack to
// one element per byte (int4 / int2 sign-extended), outputs pack back.
// Byte patterns are the ONNX 1.23 backend test data's.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <vector>

#include "onnx/sub_byte.h"
#include "onnx/tensor_proto.h"

namespace loom::onnxio {
namespace {

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data());
  return {p, p + t.byte_size()};
}

std::vector<uint8_t> as_codes(const std::vector<int>& v) {
  std::vector<uint8_t> out;
  for (int x : v) out.push_back(static_cast<uint8_t>(static_cast<int8_t>(x)));
  return out;
}

TEST(SubByte, PackingOddCounts) {
  // test_cast_FLOAT_to_INT4: -9..15 wrapped to int4, first element in the low nibble.
  std::vector<int> values;
  for (int v = -9; v <= 15; ++v) values.push_back(((v + 8) % 16 + 16) % 16 - 8);
  const std::vector<uint8_t> codes = as_codes(values);
  const std::string want = "\x87\xa9\xcb\xed\x0f\x21\x43\x65\x87\xa9\xcb\xed\x0f";
  EXPECT_EQ(packed_bytes(DType::kInt4, static_cast<int64_t>(codes.size())), 13);
  EXPECT_EQ(pack_sub_byte(DType::kInt4, codes.data(), static_cast<int64_t>(codes.size())), want);
  std::vector<uint8_t> back(codes.size());
  unpack_sub_byte(DType::kInt4, reinterpret_cast<const uint8_t*>(want.data()), static_cast<int64_t>(back.size()),
                  back.data());
  EXPECT_EQ(back, codes);
  // int2 -3..3 wrapped, four per byte from the low bits; uint2 padding bits zero.
  const std::vector<uint8_t> i2 = as_codes({1, -2, -1, 0, 1, -2, -1});
  EXPECT_EQ(pack_sub_byte(DType::kInt2, i2.data(), 7), std::string("\x39\x39", 2));
  const std::vector<uint8_t> u2 = {3, 0, 1, 2, 3};
  EXPECT_EQ(pack_sub_byte(DType::kUint2, u2.data(), 5), std::string("\x93\x03", 2));
  const uint8_t f4 = 0xE;
  EXPECT_EQ(pack_sub_byte(DType::kFloat4E2M1, &f4, 1), std::string("\x0e", 1));
  EXPECT_EQ(packed_bits(DType::kFloat8E5M2), 0);
  EXPECT_EQ(packed_bits(DType::kUint4), 4);
}

TEST(SubByte, ProtoReadsRawAndInt32DataAndWritesPacked) {
  ::onnx::TensorProto p;
  p.set_name("x");
  p.set_data_type(static_cast<int32_t>(DType::kInt4));
  p.add_dims(5);
  for (int32_t v : {16, 199, 8}) p.add_int32_data(v);  // test_dequantizelinear_int4: 0, 1, 7, -4, -8
  auto t = tensor_from_proto(p, "");
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(t->dtype(), DType::kInt4);
  EXPECT_EQ(bytes_of(*t), as_codes({0, 1, 7, -4, -8}));
  // Written back packed, as raw_data.
  const ::onnx::TensorProto out = tensor_to_proto(*t, "x");
  EXPECT_EQ(out.raw_data(), std::string("\x10\xc7\x08", 3));
  auto again = tensor_from_proto(out, "");
  ASSERT_TRUE(again.has_value()) << again.status().message();
  EXPECT_EQ(bytes_of(*again), bytes_of(*t));

  ::onnx::TensorProto u2;
  u2.set_data_type(static_cast<int32_t>(DType::kUint2));
  u2.add_dims(4);
  u2.add_int32_data(228);  // test_dequantizelinear_uint2: 0, 1, 2, 3
  auto t2 = tensor_from_proto(u2, "");
  ASSERT_TRUE(t2.has_value()) << t2.status().message();
  EXPECT_EQ(bytes_of(*t2), (std::vector<uint8_t>{0, 1, 2, 3}));

  ::onnx::TensorProto f8;  // float8 codes, one per int32
  f8.set_data_type(static_cast<int32_t>(DType::kFloat8E4M3FN));
  f8.add_dims(5);
  for (int32_t v : {0, 48, 56, 126, 237}) f8.add_int32_data(v);
  auto t8 = tensor_from_proto(f8, "");
  ASSERT_TRUE(t8.has_value()) << t8.status().message();
  EXPECT_EQ(bytes_of(*t8), (std::vector<uint8_t>{0, 48, 56, 126, 237}));
}

TEST(SubByte, WrongSizesAreRefused) {
  ::onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(static_cast<int32_t>(DType::kUint4));
  p.add_dims(3);
  p.set_raw_data(std::string("\x21", 1));  // 3 elements need 2 bytes
  auto t = tensor_from_proto(p, "");
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.status().message().find("needs 2 (packed)"), std::string::npos) << t.status().message();
  p.clear_raw_data();
  p.add_int32_data(0x21);
  auto u = tensor_from_proto(p, "");
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.status().message().find("int32_data"), std::string::npos) << u.status().message();
  // A huge shape with no data fails on the size, before any allocation.
  ::onnx::TensorProto huge;
  huge.set_data_type(static_cast<int32_t>(DType::kInt2));
  huge.add_dims(int64_t{1} << 40);
  huge.set_raw_data(std::string(4, '\0'));
  EXPECT_FALSE(tensor_from_proto(huge, "").has_value());
}

}  // namespace
}  // namespace loom::onnxio
