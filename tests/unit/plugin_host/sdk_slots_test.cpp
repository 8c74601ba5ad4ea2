// The SDK fills an EP's ABI slots only for what the author wrote: an EP
// derived from EpOf<itself> offers get_capability when it overrides claim()
// and compile when it overrides compile(), so a claim-only EP's fused claim
// is refused by the host instead of failing at compilation.
#include <gtest/gtest.h>

#include "loom/sdk.h"

namespace loom {
namespace {

class KernelsOnly : public sdk::EpOf<KernelsOnly> {};

class ClaimsOnly : public sdk::EpOf<ClaimsOnly> {
 public:
  void claim(const sdk::Graph&, sdk::ClaimSink&) override {}
};

class ClaimsAndCompiles : public sdk::EpOf<ClaimsAndCompiles> {
 public:
  void claim(const sdk::Graph&, sdk::ClaimSink&) override {}
  std::unique_ptr<sdk::CompiledPartition> compile(const sdk::Graph&) override { return nullptr; }
};

// A plain Ep says what it offers by hand, as before EpOf.
class PlainCapability : public sdk::Ep {
 public:
  bool has_capability() const override { return true; }
};

TEST(SdkSlotsTest, EpOfFillsExactlyTheSlotsTheAuthorOverrides) {
  KernelsOnly kernels;
  EXPECT_EQ(kernels.table()->get_capability, nullptr);
  EXPECT_EQ(kernels.table()->compile, nullptr);
  ClaimsOnly claims;
  EXPECT_NE(claims.table()->get_capability, nullptr);
  EXPECT_EQ(claims.table()->compile, nullptr) << "compile() is not overridden";
  ClaimsAndCompiles both;
  EXPECT_NE(both.table()->get_capability, nullptr);
  EXPECT_NE(both.table()->compile, nullptr);
}

TEST(SdkSlotsTest, PlainEpKeepsItsDeclaredCapability) {
  PlainCapability plain;
  EXPECT_NE(plain.table()->get_capability, nullptr);
  EXPECT_NE(plain.table()->compile, nullptr) << "an EP that claims is assumed to compile unless compiles() says not";
  sdk::Ep kernel_ep;
  EXPECT_EQ(kernel_ep.table()->get_capability, nullptr);
  EXPECT_EQ(kernel_ep.table()->compile, nullptr) << "a kernel-table EP offers no compile slot";
}

}  // namespace
}  // namespace loom
