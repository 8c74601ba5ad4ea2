// Frozen ABI layout: every offset, struct size and constant of the released
// ABI, measured by C11, C++17 and C++20 builds of the headers, must equal the
// numbers frozen in frozen_abi_layout.def (x86_64). A failure here means a
// released struct or constant changed, which is a major ABI bump.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "abi/abi_layout_rows.h"
#include "loom/plugin_api.h"

namespace {

struct Probe {
  const char* language;
  const LoomAbiLayoutRow* (*rows)(size_t* count);
};

// Names the probe in test output instead of dumping its bytes.
void PrintTo(const Probe& probe, std::ostream* os) { *os << probe.language; }

const Probe kProbes[] = {
    {"C11", &loom_abi_layout_rows_c11},
    {"C++17", &loom_abi_layout_rows_cxx17},
    {"C++20", &loom_abi_layout_rows_cxx20},
};

class FrozenAbiLayout : public testing::TestWithParam<Probe> {};

TEST_P(FrozenAbiLayout, EveryMeasuredValueEqualsTheFrozenOne) {
  size_t count = 0;
  const LoomAbiLayoutRow* rows = GetParam().rows(&count);
  ASSERT_GT(count, 300u) << "the frozen table lost rows";
  for (size_t i = 0; i < count; ++i)
    EXPECT_EQ(rows[i].measured, rows[i].frozen)
        << GetParam().language << ": " << rows[i].what << " changed; released ABI structs and constants are frozen "
        << "(append only, with a minor bump: see tests/abi/frozen_abi_layout.def)";
}

INSTANTIATE_TEST_SUITE_P(Languages, FrozenAbiLayout, testing::ValuesIn(kProbes),
                         [](const testing::TestParamInfo<Probe>& info) {
                           std::string name = info.param.language;
                           for (char& c : name)
                             if (c == '+') c = 'x';
                           return name;
                         });

TEST(FrozenAbiLayout, AllLanguagesProbeTheSameRows) {
  size_t c11 = 0, cxx17 = 0, cxx20 = 0;
  const LoomAbiLayoutRow* a = loom_abi_layout_rows_c11(&c11);
  const LoomAbiLayoutRow* b = loom_abi_layout_rows_cxx17(&cxx17);
  const LoomAbiLayoutRow* c = loom_abi_layout_rows_cxx20(&cxx20);
  ASSERT_EQ(c11, cxx17);
  ASSERT_EQ(c11, cxx20);
  for (size_t i = 0; i < c11; ++i) {
    EXPECT_STREQ(a[i].what, b[i].what);
    EXPECT_EQ(a[i].measured, b[i].measured) << a[i].what << " differs between C11 and C++17";
    EXPECT_EQ(a[i].measured, c[i].measured) << a[i].what << " differs between C11 and C++20";
  }
}

TEST(FrozenAbiLayout, EntrySymbolNameIsFrozen) { EXPECT_STREQ(LOOM_PLUGIN_ENTRY_SYMBOL, "loom_plugin_entry"); }

}  // namespace
