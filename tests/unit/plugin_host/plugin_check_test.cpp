// check_plugin (`loom plugins --check`): good plugins pass with every check
// ok, broken ones fail with a line naming the reason (the plugin host's own
// refusal where it has one), inconsistent ones fail or warn on the check
// concerned; and the process keeps working through all of them.
#include "loom/plugin_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "loom/plugin_api.h"

namespace loom {
namespace {

const std::string kPluginDir = std::string(LOOM_BINARY_DIR) + "/lib/loom/plugins";
const std::string kTestPlugins = LOOM_TEST_PLUGIN_DIR;

// The one .so in `dir` (test plugin folders hold exactly one).
std::string library_in(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") return e.path().string();
  return dir + "/(no library)";
}

std::string dump(const PluginCheckReport& r) {
  std::string s = r.path + "\n";
  for (const auto& i : r.items) s += std::string("  ") + check_level_name(i.level) + " " + i.what + ": " + i.detail + "\n";
  return s;
}

// Items at `level` whose what + detail contain every needle.
size_t count_items(const PluginCheckReport& r, CheckLevel level, const std::vector<std::string>& needles) {
  size_t n = 0;
  for (const auto& i : r.items) {
    if (i.level != level) continue;
    const std::string text = i.what + ": " + i.detail;
    bool all = true;
    for (const auto& needle : needles) all = all && text.find(needle) != std::string::npos;
    n += all ? 1 : 0;
  }
  return n;
}

const PluginCheckItem* find_item(const PluginCheckReport& r, const std::string& what_contains) {
  for (const auto& i : r.items)
    if (i.what.find(what_contains) != std::string::npos) return &i;
  return nullptr;
}

PluginCheckReport check_case(const std::string& name) { return check_plugin(library_in(kTestPlugins + "/" + name)); }

void expect_fail(const std::string& name, const std::vector<std::string>& needles) {
  PluginCheckReport r = check_case(name);
  EXPECT_FALSE(r.ok()) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, needles), 1u) << dump(r);
}

TEST(PluginCheck, ReferencePluginPassesEveryCheck) {
  PluginCheckReport r = check_plugin(kPluginDir + "/libloom_reference.so");
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(r.failures(), 0u);
  for (const char* what : {"entry symbol", "ABI", "plugin table", "plugin", "factory 'reference'", "EP 'reference'",
                           "'reference' kernel table", "'reference' claim slots", "'reference' allocator / data transfer",
                           "'reference' streams", "custom-op schemas", "release"})
    EXPECT_NE(find_item(r, what), nullptr) << "no '" << what << "' check\n" << dump(r);
  const PluginCheckItem* table = find_item(r, "'reference' kernel table");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->level, CheckLevel::kOk) << dump(r);
  // "<N> kernels; ..."
  EXPECT_GT(std::stoul(table->detail), 100u) << table->detail;
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"'reference' streams", "synchronous"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"ABI", "agreed minor " + std::to_string(LOOM_ABI_VERSION_MINOR)}), 1u)
      << dump(r);
}

TEST(PluginCheck, DeviceTestPluginPassesWithDeviceMemory) {
  PluginCheckReport r = check_plugin(library_in(kTestPlugins + "/device"));
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"'test_device' allocator / data transfer", "memory 'test_device",
                                             "copies to and from host"}),
            1u)
      << dump(r);
}

TEST(PluginCheck, AsyncTestPluginReportsStreams) {
  PluginCheckReport r = check_plugin(library_in(kTestPlugins + "/async"));
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"'test_async' streams", "asynchronous EP"}), 1u) << dump(r);
}

TEST(PluginCheck, AbiGoodOlderAndNewerMinorPluginsPass) {
  for (const char* name : {"good", "older_minor", "newer_minor"}) {
    PluginCheckReport r = check_case(name);
    EXPECT_TRUE(r.ok()) << dump(r);
    EXPECT_EQ(r.warnings(), 0u) << dump(r);
  }
}

// --- libraries the host refuses: the FAIL line carries the refusal ---

TEST(PluginCheck, MissingFileFailsNamingIt) {
  const std::string path = kTestPlugins + "/does_not_exist/libnothing.so";
  PluginCheckReport r = check_plugin(path);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {"library", path, "no such file"}), 1u) << dump(r);
}

TEST(PluginCheck, MissingEntrySymbolFails) {
  expect_fail("missing_entry", {"entry symbol", "missing entry symbol", LOOM_PLUGIN_ENTRY_SYMBOL});
}

TEST(PluginCheck, WrongMajorFails) { expect_fail("wrong_major", {"ABI", "majors must match"}); }

TEST(PluginCheck, MissingRequiredSlotFails) {
  PluginCheckReport r = check_case("missing_slot");
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {"plugin table", "required slot 'get_ep_factories' is missing"}), 1u)
      << dump(r);
  // The steps before it passed.
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"entry symbol"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"ABI"}), 1u) << dump(r);
}

TEST(PluginCheck, TooSmallTableFails) { expect_fail("small_table", {"plugin table", "too small"}); }

TEST(PluginCheck, FailingInitFails) { expect_fail("init_fails", {"init", "init failed on purpose"}); }

TEST(PluginCheck, MissingDependencyFailsNamingIt) {
  expect_fail("missing_dependency", {"library", "libloom_test_missing_dep.so", "cannot open shared object file"});
}

// --- loadable, but inconsistent ---

TEST(PluginCheck, InconsistentKernelTableFailsAndWarns) {
  PluginCheckReport r = check_case("bad_kernels");
  EXPECT_FALSE(r.ok()) << dump(r);
  const std::string what = "'abi_test_ep' kernel table";
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "empty op_type", "entry 0"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "end_version < since_version", "Inverted"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "unknown LOOM_DTYPE_", "UnknownType", "99"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "empty param", "Unnamed"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kWarn, {what, "overlapping types", "Twice 1-10", "Twice 7-"}), 1u) << dump(r);
  EXPECT_EQ(r.failures(), 4u) << dump(r);
  // Everything is still released.
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"release", "1 EP(s)"}), 1u) << dump(r);
}

TEST(PluginCheck, EpThatCannotClaimAnythingWarns) {
  PluginCheckReport r = check_case("empty_ep");
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kWarn, {"claim slots", "can never claim a node"}), 1u) << dump(r);
}

TEST(PluginCheck, StreamsWithoutEventsFail) {
  expect_fail("stream_without_event", {"EP 'abi_test_ep'", "makes streams but no events"});
}

TEST(PluginCheck, FactoryWithoutDevicesWarnsWithItsReason) {
  PluginCheckReport r = check_case("no_devices");
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kWarn, {"factory 'absent_ep'", "no test hardware here (on purpose)"}), 1u)
      << dump(r);
  EXPECT_EQ(find_item(r, "EP 'absent_ep'"), nullptr) << "no EP is created without a device\n" << dump(r);
}

TEST(PluginCheck, ValidCustomOpSchemasPass) {
  PluginCheckReport r = check_case("custom_ops");
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kOk, {"custom-op schemas", "1 domain(s), 2 op(s)", "test.custom (Scale"}), 1u)
      << dump(r);
}

TEST(PluginCheck, BadCustomOpSchemasFail) {
  PluginCheckReport r = check_case("bad_custom_ops");
  EXPECT_FALSE(r.ok()) << dump(r);
  const std::string what = "custom-op schemas";
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "domain 1: name '' is empty or an ONNX domain"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "domain 1: op 0: empty op_type"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "domain 1: op Ancient: since_version 0 < 1"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "op Backwards: invalid arity (inputs 3..2"}), 1u) << dump(r);
  EXPECT_EQ(count_items(r, CheckLevel::kFail, {what, "domain 'test.custom': op Scale (since 1) is declared twice"}), 1u)
      << dump(r);
}

// Checking every case, twice over, in one process leaves it usable.
TEST(PluginCheck, BrokenPluginsLeaveTheProcessUsable) {
  for (int round = 0; round < 2; ++round) {
    for (const char* name : {"missing_entry", "wrong_major", "missing_slot", "small_table", "init_fails",
                             "missing_dependency", "bad_kernels", "stream_without_event", "bad_custom_ops"})
      EXPECT_FALSE(check_case(name).ok()) << name;
    EXPECT_TRUE(check_case("good").ok());
  }
}

}  // namespace
}  // namespace loom
