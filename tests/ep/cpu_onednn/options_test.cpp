// cpu_onednn provider options from a config are untrusted: a bad value
// refuses the EP with a message naming the option (issue 26: a million
// OpenMP threads crashed libgomp instead).
#include <gtest/gtest.h>

#include "ep_compare.h"

namespace loom {
namespace {

using namespace ep_testing;

std::string creation_error(const std::string& key, const std::string& value) {
  Config c;
  c.providers = {"cpu_onednn"};
  c.fallback = FallbackPolicy::kDeny;
  c.provider_options["cpu_onednn"][key] = value;
  auto env = testing::make_env(c);
  if (!env) return "no environment";
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", kFloat, {2, 3});
  auto s = Session::create_from_bytes(env, m.bytes());
  return s.has_value() ? "" : s.status().message();
}

TEST(OnednnOptions, BadValuesAreNamed) {
  std::string e = creation_error("intra_op_threads", "1000000");
  EXPECT_NE(e.find("cpu_onednn: option intra_op_threads must be at most 1024 threads, got '1000000'"),
            std::string::npos)
      << e;
  e = creation_error("intra_op_threads", "-3");
  EXPECT_NE(e.find("must be a non-negative integer"), std::string::npos) << e;
  e = creation_error("winograd", "maybe");
  EXPECT_NE(e.find("option winograd must be true or false"), std::string::npos) << e;
  EXPECT_EQ(creation_error("intra_op_threads", "2"), "");
}

}  // namespace
}  // namespace loom
