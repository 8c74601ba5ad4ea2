// Op meaning has one owner: outside the op registry (core/opreg/), no
// source of the runtime, its plugins or its tools includes ONNX's schema,
// inference or checker headers; they read Loom's OpDefs instead.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace loom {
namespace {

bool includes_onnx_schema_headers(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#include", 0) != 0) continue;
    for (const char* header : {"<onnx/defs/", "<onnx/shape_inference/", "<onnx/checker", "<onnx/version_converter/"})
      if (line.find(header) != std::string::npos) return true;
  }
  return false;
}

TEST(Layering, OnlyTheOpRegistryIncludesOnnxSchemaHeaders) {
  const std::filesystem::path root(LOOM_SOURCE_DIR);
  const std::filesystem::path registry = root / "core" / "opreg";
  std::vector<std::string> offenders;
  int scanned = 0;
  for (const char* top : {"core", "plugins", "tools", "plugin_api", "python"}) {
    if (!std::filesystem::is_directory(root / top)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cc" && ext != ".cu")) continue;
      ++scanned;
      const std::string rel = std::filesystem::relative(entry.path(), registry).string();
      const bool in_registry = rel.rfind("..", 0) != 0;
      if (!in_registry && includes_onnx_schema_headers(entry.path())) offenders.push_back(entry.path().string());
    }
  }
  EXPECT_GT(scanned, 100);
  EXPECT_TRUE(offenders.empty()) << offenders.size() << " files, the first " << offenders.front();
}

}  // namespace
}  // namespace loom
