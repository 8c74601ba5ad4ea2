// NumPy .npy files (loom/tensor_io.h): what numpy.save writes reads back
// with its type and shape; what Loom writes, numpy's format reads (checked
// here by the header numpy expects); malformed files are refused naming the
// file and the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/test_env.h"
#include "loom/tensor_io.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

class NpyIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("loom_npy_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A file as numpy.save (format 1.0) writes it: magic, version, header
  // length, the dict padded to 64 bytes, then the data.
  std::string write_npy(const std::string& name, const std::string& dict, const std::string& data) {
    std::string header = dict;
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header + data;
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  fs::path dir_;
};

TEST_F(NpyIoTest, ReadsWhatNumpyWrites) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  auto t = read_tensor_npy(write_npy("a.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                     std::string(reinterpret_cast<const char*>(values), sizeof values)));
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(t->dtype(), DType::kFloat);
  EXPECT_EQ(t->dims(), (Dims{2, 3}));
  EXPECT_EQ(testing::values_of(*t), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const int64_t ids[3] = {7, -1, 9};
  auto v = read_tensor_npy(write_npy("b.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                                     std::string(reinterpret_cast<const char*>(ids), sizeof ids)));
  ASSERT_TRUE(v.has_value()) << v.status().message();
  EXPECT_EQ(v->dims(), (Dims{3}));
  EXPECT_EQ(v->data_as<int64_t>()[1], -1);
  auto scalar = read_tensor_npy(write_npy("c.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", "\x01"));
  ASSERT_TRUE(scalar.has_value()) << scalar.status().message();
  EXPECT_EQ(scalar->dtype(), DType::kBool);
  EXPECT_TRUE(scalar->dims().empty());
}

TEST_F(NpyIoTest, WriteThenReadRoundTrips) {
  const std::string path = (dir_ / "round.npy").string();
  Tensor t = Tensor::from_vector(DType::kUint8, {2, 2, 1}, std::vector<uint8_t>{1, 2, 3, 250});
  ASSERT_TRUE(write_tensor_npy(t, path));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 1), }"), std::string::npos);
  EXPECT_EQ((bytes.size() - 4) % 64, 0u) << "data 64-byte aligned as numpy writes it";
  auto back = read_tensor_npy(path);
  ASSERT_TRUE(back.has_value()) << back.status().message();
  EXPECT_EQ(back->dims(), t.dims());
  EXPECT_EQ(std::string(static_cast<const char*>(back->data()), 4), std::string("\x01\x02\x03\xfa", 4));
}

TEST_F(NpyIoTest, MalformedFilesAreRefusedNamingTheProblem) {
  auto message = [&](const std::string& name, const std::string& dict, const std::string& data) {
    auto t = read_tensor_npy(write_npy(name, dict, data));
    EXPECT_FALSE(t.has_value()) << name;
    return t.has_value() ? std::string() : t.status().message();
  };
  EXPECT_NE(message("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", std::string(8, '\0'))
                .find("Fortran-ordered"),
            std::string::npos);
  EXPECT_NE(message("be.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'))
                .find("big-endian"),
            std::string::npos);
  EXPECT_NE(message("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(8, '\0'))
                .find("needs 16"),
            std::string::npos);
  EXPECT_NE(message("obj.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'))
                .find("not supported"),
            std::string::npos);
  EXPECT_NE(message("bool.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x05")
                .find("byte value 5"),
            std::string::npos);
  const std::string junk = (dir_ / "junk.npy").string();
  std::ofstream(junk) << "not numpy at all";
  auto t = read_tensor_npy(junk);
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.status().message().find("junk.npy: not a .npy file"), std::string::npos) << t.status().message();
}

}  // namespace
}  // namespace loom
