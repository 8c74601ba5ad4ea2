// Variant builds (LOOM_PluginApi.score): of several builds of one plugin in a
// directory the host initialises the best for this machine and says which.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

std::string file_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

TEST(PluginVariants, TheHighestScoringBuildIsChosenAndNamed) {
  Config c;
  c.providers = {"test_variant"};
  c.fallback = FallbackPolicy::kDeny;
  auto env = testing::make_env(c, "variants");
  ASSERT_TRUE(env);
  int loaded = 0, not_chosen = 0;
  for (const PluginReport& r : env->plugin_reports()) {
    if (r.path.find("/variants/") == std::string::npos) continue;
    if (r.loaded) {
      ++loaded;
      // fast and fast_tie both score 10: the first in file order wins.
      EXPECT_EQ(file_of(r.path), "libloom_test_variant_fast.so");
      EXPECT_NE(r.variant.find("chosen among 3 builds of 'test_variant' (score 10"), std::string::npos) << r.variant;
      EXPECT_NE(r.variant.find("libloom_test_variant_generic.so score 1"), std::string::npos) << r.variant;
    } else {
      ++not_chosen;
      EXPECT_NE(r.refusal.find("not chosen: libloom_test_variant_fast.so is a better build of plugin 'test_variant'"),
                std::string::npos)
          << r.refusal;
    }
  }
  EXPECT_EQ(loaded, 1);
  EXPECT_EQ(not_chosen, 2);
  // The chosen build serves the provider.
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {3});
  auto s = Session::create_from_bytes(env, m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto out = (*s)->run({{"x", testing::float_tensor({3}, {-1, 0, 2})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{0, 0, 2}));
}

TEST(PluginVariants, ABuildThatCannotRunHereIsRefused) {
  auto env = testing::make_env({}, "variant_unusable");
  ASSERT_TRUE(env);
  bool seen = false;
  for (const PluginReport& r : env->plugin_reports())
    if (r.path.find("/variant_unusable/") != std::string::npos) {
      seen = true;
      EXPECT_FALSE(r.loaded);
      EXPECT_NE(r.refusal.find("cannot run on this machine (plugin 'test_variant' scored 0)"), std::string::npos)
          << r.refusal;
    }
  EXPECT_TRUE(seen);
  const auto providers = env->available_providers();
  EXPECT_EQ(std::find(providers.begin(), providers.end(), "test_variant"), providers.end());
}

}  // namespace
}  // namespace loom
