// Providers named in the priority list are the configuration the user
// asked for: one that cannot be loaded or started fails session creation,
// saying which and why, unless "fallback" is "allow" (ONNX Runtime's
// silent CPU fallback is what its users complain about most).
#include <gtest/gtest.h>

#include <string>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string relu_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", ::onnx::TensorProto::FLOAT, {2});
  return m.bytes();
}

Expected<std::unique_ptr<Session>> create(std::vector<std::string> providers, FallbackPolicy fallback,
                                          std::map<std::string, std::map<std::string, std::string>> options = {}) {
  Config c;
  c.providers = std::move(providers);
  c.fallback = fallback;
  c.provider_options = std::move(options);
  auto env = testing::make_env(c);
  if (env == nullptr) return fail("no environment");
  return Session::create_from_bytes(env, relu_model());
}

TEST(ProviderSelectionTest, AMissingNamedProviderFailsCreationByDefault) {
  EXPECT_EQ(Config{}.fallback, FallbackPolicy::kWarn);
  for (FallbackPolicy policy : {FallbackPolicy::kWarn, FallbackPolicy::kDeny}) {
    auto s = create({"no_such_ep", "reference"}, policy);
    ASSERT_FALSE(s.has_value()) << fallback_policy_name(policy);
    const std::string why = s.status().message();
    EXPECT_EQ(s.status().code(), StatusCode::kNotFound) << why;
    EXPECT_TRUE(contains(why, "provider 'no_such_ep' was not found")) << why;
    EXPECT_TRUE(contains(why, "available: ")) << why;
    EXPECT_TRUE(contains(why, "\"fallback\": \"allow\"")) << why;
  }
}

TEST(ProviderSelectionTest, FallbackAllowSkipsAMissingProvider) {
  auto s = create({"no_such_ep", "reference"}, FallbackPolicy::kAllow);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_EQ((*s)->placement().nodes.size(), 1u);
  EXPECT_EQ((*s)->placement().nodes[0].provider, "reference");
}

TEST(ProviderSelectionTest, ANamedProviderThatFailsToStartFailsCreationSayingWhy) {
  if (!testing::has_provider("cpu_onednn")) GTEST_SKIP() << "cpu_onednn is not in this build";
  auto s = create({"cpu_onednn", "reference"}, FallbackPolicy::kWarn, {{"cpu_onednn", {{"no_such_option", "1"}}}});
  ASSERT_FALSE(s.has_value());
  EXPECT_TRUE(contains(s.status().message(), "no_such_option")) << s.status().message();
  auto allowed = create({"cpu_onednn", "reference"}, FallbackPolicy::kAllow, {{"cpu_onednn", {{"no_such_option", "1"}}}});
  EXPECT_TRUE(allowed.has_value()) << allowed.status().message();
}

TEST(ProviderSelectionTest, WithoutANamedListEveryAvailableProviderIsTaken) {
  auto s = create({}, FallbackPolicy::kWarn);
  ASSERT_TRUE(s.has_value()) << s.status().message();
}

}  // namespace
}  // namespace loom
