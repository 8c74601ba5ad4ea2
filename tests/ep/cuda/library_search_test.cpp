// Where the cuda plugin's entry library looks for the CUDA libraries
// (loader/library_search.h): NVIDIA's Python wheels in a virtualenv or on
// PATH, LOOM_CUDA_LIBRARY_PATH, and the build's toolkit. No GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "loader/library_search.h"
#include "loader/preflight.h"

namespace loom::cuda_loader {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// A fake Python environment with NVIDIA wheel folders (CUDA 13 wheels put
// their libraries in nvidia/cu13/lib, cuDNN in nvidia/cudnn/lib).
fs::path fake_env(const std::string& name) {
  const fs::path root = fs::temp_directory_path() / ("loom_cuda_search_" + name + std::to_string(getpid()));
  fs::remove_all(root);
  for (const char* lib : {"cu13", "cudnn"})
    fs::create_directories(root / "lib" / "python3.12" / "site-packages" / "nvidia" / lib / "lib");
  fs::create_directories(root / "bin");
  return root;
}

bool contains(const std::vector<std::string>& dirs, const fs::path& p) {
  for (const std::string& d : dirs)
    if (fs::path(d) == p) return true;
  return false;
}

TEST(CudaLibrarySearch, SplitsPathLists) {
  EXPECT_EQ(split_path_list("/a::/b:"), (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(split_path_list("").empty());
}

TEST(CudaLibrarySearch, FindsWheelFoldersOfAVirtualEnvAndOfPath) {
  const fs::path venv = fake_env("venv"), onpath = fake_env("path");
  const fs::path site = "lib/python3.12/site-packages/nvidia";
  {
    ScopedEnv v("VIRTUAL_ENV", venv.string());
    ScopedEnv p("PATH", "/usr/bin:" + (onpath / "bin").string());
    const std::vector<std::string> dirs = library_search_dirs("/usr/local/cuda/lib64");
    EXPECT_TRUE(contains(dirs, venv / site / "cu13" / "lib"));
    EXPECT_TRUE(contains(dirs, venv / site / "cudnn" / "lib"));
    EXPECT_TRUE(contains(dirs, onpath / site / "cu13" / "lib"));
    EXPECT_TRUE(contains(dirs, "/usr/local/cuda/lib64"));
  }
  fs::remove_all(venv);
  fs::remove_all(onpath);
}

TEST(CudaLibrarySearch, ExplicitPathComesFirst) {
  ScopedEnv e("LOOM_CUDA_LIBRARY_PATH", "/opt/first:/opt/second");
  const std::vector<std::string> dirs = library_search_dirs("/usr/local/cuda/lib64");
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/opt/first");
  EXPECT_EQ(dirs[1], "/opt/second");
}

TEST(CudaLibrarySearch, PreflightLoadsALibraryFromASearchFolder) {
  // A library that the default search does not find but a folder has: the
  // toolkit's runtime, under a folder given explicitly.
  const std::string missing = preflight({{"libcudart.so.13", "the CUDA 13 runtime"}}, {LOOM_CUDA_LIBRARY_DIR});
  EXPECT_EQ(missing, "");
  const std::string none = preflight({{"libloom_absent.so.1", "Absent 1"}}, {"/nonexistent"});
  EXPECT_NE(none.find("libloom_absent.so.1 (Absent 1)"), std::string::npos) << none;
  EXPECT_NE(none.find("/nonexistent"), std::string::npos) << none;
}

}  // namespace
}  // namespace loom::cuda_loader
