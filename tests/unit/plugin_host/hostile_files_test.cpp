// Files a stranger can put where Loom reads (issue 26): a truncated plugin
// library in a scanned folder, a FIFO or a non-ELF file named .so, a FIFO or
// /dev/zero as a model or an input. Each is refused with a reason naming
// the file; nothing blocks, and the process keeps working.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/test_env.h"
#include "loom/plugin_check.h"
#include "loom/tensor_io.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

const std::string kPluginDir = std::string(LOOM_BINARY_DIR) + "/lib/loom/plugins";

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "loom_hostile_files" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string refusal_of(const Environment& env, const std::string& file) {
  for (const PluginReport& r : env.plugin_reports())
    if (fs::path(r.path).filename() == file) return r.loaded ? "loaded" : r.refusal;
  return "not reported";
}

TEST(HostileFiles, TruncatedAndFakePluginsAreRefusedBeforeLoading) {
  const fs::path dir = fresh_dir("plugins");
  // Half of a real plugin: mapping it whole would fault past the end.
  const fs::path real = fs::path(kPluginDir) / "libloom_reference.so";
  const auto size = fs::file_size(real);
  {
    std::ifstream in(real, std::ios::binary);
    std::string bytes(static_cast<size_t>(size / 2), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(dir / "libtruncated.so", std::ios::binary) << bytes;
  }
  std::ofstream(dir / "libtext.so") << std::string(200, 'x');  // long enough for a header, no magic
  Config c;
  c.plugin_dirs = {dir.string()};
  auto env = testing::make_env(c);
  ASSERT_TRUE(env);
  EXPECT_NE(refusal_of(*env, "libtruncated.so").find("truncated"), std::string::npos)
      << refusal_of(*env, "libtruncated.so");
  EXPECT_NE(refusal_of(*env, "libtext.so").find("no ELF magic"), std::string::npos) << refusal_of(*env, "libtext.so");
  // The bundled plugins still load.
  const auto providers = env->available_providers();
  EXPECT_NE(std::find(providers.begin(), providers.end(), "reference"), providers.end());
}

TEST(HostileFiles, FifosAreRefusedWithoutBlocking) {
  const fs::path dir = fresh_dir("fifos");
  for (const char* name : {"libfifo.so", "model.onnx", "input.pb"})
    ASSERT_EQ(mkfifo((dir / name).c_str(), 0600), 0) << name;
  const PluginCheckReport report = check_plugin((dir / "libfifo.so").string());
  EXPECT_FALSE(report.ok());
  bool named = false;
  for (const auto& item : report.items) named = named || item.detail.find("not a regular file") != std::string::npos;
  EXPECT_TRUE(named);
  auto model = Session::create(testing::reference_env(), (dir / "model.onnx").string());
  ASSERT_FALSE(model.has_value());
  EXPECT_NE(model.status().message().find("not a regular file"), std::string::npos) << model.status().message();
  auto input = read_tensor_pb((dir / "input.pb").string());
  ASSERT_FALSE(input.has_value());
  EXPECT_NE(input.status().message().find("not a regular file"), std::string::npos) << input.status().message();
}

TEST(HostileFiles, DevZeroIsNotReadToTheEnd) {
  auto model = Session::create(testing::reference_env(), "/dev/zero");
  ASSERT_FALSE(model.has_value());
  EXPECT_NE(model.status().message().find("/dev/zero: not a regular file"), std::string::npos)
      << model.status().message();
  auto input = read_tensor_pb("/dev/zero");
  ASSERT_FALSE(input.has_value());
  EXPECT_NE(input.status().message().find("/dev/zero: not a regular file"), std::string::npos)
      << input.status().message();
  EXPECT_FALSE(read_tensor_npy("/dev/zero").has_value());
}

}  // namespace
}  // namespace loom
