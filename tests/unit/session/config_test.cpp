#include "loom/config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

namespace loom {
namespace {

// Sets (or unsets) an environment variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Clears every override so that the host environment cannot leak in.
struct CleanEnv {
  ScopedEnv a{"LOOM_PLUGIN_PATH", nullptr};
  ScopedEnv b{"LOOM_PROVIDERS", nullptr};
  ScopedEnv c{"LOOM_LOG_LEVEL", nullptr};
};

std::string error_of(const std::string& json) {
  auto c = Config::from_json_string(json, "config.json");
  EXPECT_FALSE(c.has_value()) << json;
  return c.has_value() ? "" : c.status().message();
}

TEST(ConfigTest, DefaultsFromEmptyObject) {
  auto c = Config::from_json_string("{}");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_TRUE(c->plugin_dirs.empty());
  EXPECT_TRUE(c->providers.empty());
  EXPECT_EQ(c->fallback, FallbackPolicy::kWarn);
  EXPECT_EQ(c->optimization_level, OptimizationLevel::kExtended);
  EXPECT_EQ(c->intra_op_threads, 0);
  EXPECT_EQ(c->inter_op_threads, 0);
  EXPECT_EQ(c->log_level, "warn");
}

TEST(ConfigTest, ReadsEveryKey) {
  auto c = Config::from_json_string(R"({
    "plugin_dirs": ["/opt/a", "b"],
    "providers": ["cpu_onednn", "reference"],
    "provider_options": {"cpu_onednn": {"threads": "4", "mode": "fast"}, "reference": {}},
    "fallback": "deny",
    "optimization_level": "layout",
    "disabled_passes": ["constant_folding"],
    "stop_after_pass": 3,
    "threads": {"intra_op": 8, "inter_op": 2},
    "log_level": "debug"
  })");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->plugin_dirs, (std::vector<std::string>{"/opt/a", "b"}));
  EXPECT_EQ(c->providers, (std::vector<std::string>{"cpu_onednn", "reference"}));
  EXPECT_EQ(c->provider_options.at("cpu_onednn").at("threads"), "4");
  EXPECT_EQ(c->provider_options.at("cpu_onednn").at("mode"), "fast");
  EXPECT_TRUE(c->provider_options.at("reference").empty());
  EXPECT_EQ(c->fallback, FallbackPolicy::kDeny);
  EXPECT_EQ(c->optimization_level, OptimizationLevel::kLayout);
  EXPECT_EQ(c->disabled_passes, std::vector<std::string>{"constant_folding"});
  EXPECT_EQ(c->stop_after_pass, 3);
  EXPECT_EQ(c->intra_op_threads, 8);
  EXPECT_EQ(c->inter_op_threads, 2);
  EXPECT_EQ(c->log_level, "debug");
}

TEST(ConfigTest, EnumNames) {
  for (const char* name : {"allow", "warn", "deny"}) {
    auto c = Config::from_json_string(std::string(R"({"fallback": ")") + name + "\"}");
    ASSERT_TRUE(c);
    EXPECT_EQ(fallback_policy_name(c->fallback), name);
  }
  for (const char* name : {"disabled", "basic", "extended", "layout", "all"}) {
    auto c = Config::from_json_string(std::string(R"({"optimization_level": ")") + name + "\"}");
    ASSERT_TRUE(c);
    EXPECT_EQ(optimization_level_name(c->optimization_level), name);
  }
}

TEST(ConfigTest, UnknownKeysNameTheirPath) {
  EXPECT_EQ(error_of(R"({"provider": ["x"]})"), "config.json: unknown key 'provider'");
  EXPECT_EQ(error_of(R"({"threads": {"intra": 1}})"), "config.json: unknown key 'threads.intra'");
}

TEST(ConfigTest, ExecutionModeAndInterOpPool) {
  auto c = Config::from_json_string(
      R"({"execution_mode": "parallel", "threads": {"inter_op": 3, "spin_us": 0, "shared_inter_op": true}})");
  ASSERT_TRUE(c.has_value()) << c.status().message();
  EXPECT_EQ(c->execution_mode, ExecutionMode::kParallel);
  EXPECT_EQ(c->inter_op_threads, 3);
  EXPECT_EQ(c->spin_us, 0);
  EXPECT_TRUE(c->shared_inter_op);
  EXPECT_NE(c->to_json().find("\"execution_mode\": \"parallel\""), std::string::npos) << c->to_json();
  EXPECT_EQ(Config().execution_mode, ExecutionMode::kSequential);
  EXPECT_EQ(error_of(R"({"execution_mode": "fast"})"),
            "config.json: execution_mode: expected one of \"sequential\", \"parallel\", got \"fast\"");
  EXPECT_EQ(error_of(R"({"threads": {"shared_inter_op": 1}})"),
            "config.json: threads.shared_inter_op: expected true or false, got 1");
  EXPECT_EQ(error_of(R"({"threads": {"spin_us": -5}})"),
            "config.json: threads.spin_us: expected a non-negative integer, got -5");
}

TEST(ConfigTest, MemoryArenas) {
  auto c = Config::from_json_string(
      R"({"memory": {"arena_limit_mb": {"cpu": 512, "*": 64}, "arena_growth": "exact", "shrink_after_run": true}})");
  ASSERT_TRUE(c.has_value()) << c.status().message();
  EXPECT_EQ(c->arena_limit_mb.at("cpu"), 512);
  EXPECT_EQ(c->arena_limit_mb.at("*"), 64);
  EXPECT_EQ(c->arena_growth, ArenaGrowth::kExact);
  EXPECT_TRUE(c->shrink_arenas_after_run);
  EXPECT_NE(c->to_json().find("\"arena_growth\": \"exact\""), std::string::npos) << c->to_json();
  EXPECT_EQ(error_of(R"({"memory": {"arena_limit_mb": {"cpu": -1}}})"),
            "config.json: memory.arena_limit_mb.cpu: expected a non-negative integer, got -1");
  EXPECT_EQ(error_of(R"({"memory": {"arena_growth": "triple"}})"),
            "config.json: memory.arena_growth: expected one of \"double\", \"exact\", got \"triple\"");
  EXPECT_EQ(error_of(R"({"memory": {"limit": 3}})"), "config.json: unknown key 'memory.limit'");
}

TEST(ConfigTest, Profiling) {
  auto c = Config::from_json_string(R"({"profiling": {"enabled": true, "path": "/tmp/p.json"}})");
  ASSERT_TRUE(c.has_value()) << c.status().message();
  EXPECT_TRUE(c->profiling_enabled);
  EXPECT_EQ(c->profiling_path, "/tmp/p.json");
  EXPECT_FALSE(Config().profiling_enabled);
  EXPECT_EQ(error_of(R"({"profiling": {"enabled": "yes"}})"),
            "config.json: profiling.enabled: expected true or false, got \"yes\"");
  EXPECT_EQ(error_of(R"({"profiling": {"path": ""}})"),
            "config.json: profiling.path: expected a non-empty string, got \"\"");
}

TEST(ConfigTest, WrongTypesNameTheirPath) {
  EXPECT_EQ(error_of(R"({"threads": {"intra_op": "x"}})"),
            "config.json: threads.intra_op: expected a non-negative integer, got \"x\"");
  EXPECT_EQ(error_of(R"({"threads": {"inter_op": -1}})"),
            "config.json: threads.inter_op: expected a non-negative integer, got -1");
  EXPECT_EQ(error_of(R"({"threads": {"inter_op": 1.5}})"),
            "config.json: threads.inter_op: expected a non-negative integer, got 1.5");
  EXPECT_EQ(error_of(R"({"threads": {"inter_op": true}})"),
            "config.json: threads.inter_op: expected a non-negative integer, got true");
  EXPECT_EQ(error_of(R"({"threads": {"inter_op": 99999999999}})"),
            "config.json: threads.inter_op: expected a non-negative integer, got 99999999999");
  EXPECT_EQ(error_of(R"({"providers": ["a", 3]})"), "config.json: providers[1]: expected a string, got 3");
  EXPECT_EQ(error_of(R"({"providers": "a"})"), "config.json: providers: expected an array of strings, got \"a\"");
  EXPECT_EQ(error_of(R"({"plugin_dirs": [""]})"), "config.json: plugin_dirs[0]: expected a non-empty string");
  EXPECT_EQ(error_of(R"({"provider_options": {"cuda": {"device_id": 0}}})"),
            "config.json: provider_options.cuda.device_id: expected a string, got 0");
  EXPECT_EQ(error_of(R"({"provider_options": {"cuda": "x"}})"),
            "config.json: provider_options.cuda: expected an object of string options, got \"x\"");
  EXPECT_EQ(error_of(R"({"threads": 4})").rfind("config.json: threads: expected an object", 0), 0u);
  EXPECT_EQ(error_of(R"([1, 2])"), "config.json: expected a JSON object at top level, got [1,2]");
  EXPECT_EQ(error_of(R"({"stop_after_pass": -2})"), "config.json: stop_after_pass: expected an integer >= -1, got -2");
  EXPECT_EQ(error_of(R"({"disabled_passes": "x"})"),
            "config.json: disabled_passes: expected an array of strings, got \"x\"");
}

TEST(ConfigTest, BadEnumValuesListTheChoices) {
  EXPECT_EQ(error_of(R"({"fallback": "maybe"})"),
            "config.json: fallback: expected one of \"allow\", \"warn\", \"deny\", got \"maybe\"");
  EXPECT_NE(error_of(R"({"optimization_level": 2})").find("optimization_level: expected one of"), std::string::npos);
  EXPECT_NE(error_of(R"({"log_level": "verbose"})").find("log_level: expected one of"), std::string::npos);
}

TEST(ConfigTest, InvalidJsonReportsLineAndColumn) {
  const std::string e = error_of("{\n  \"providers\": [\"a\",]\n}");
  EXPECT_EQ(e.rfind("config.json: invalid JSON: ", 0), 0u) << e;
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("column"), std::string::npos) << e;
  EXPECT_EQ(e.find("[json.exception"), std::string::npos) << e;
  EXPECT_FALSE(Config::from_json_string(""));
}

// Config files may come from strangers (issue 26): nesting, thread counts,
// size and file kind are bounded before any work, each error naming it.
TEST(ConfigTest, HostileConfigsFailCleanly) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string e = error_of(deep);
  EXPECT_NE(e.find("nest deeper than 64 levels"), std::string::npos) << e.substr(0, 200);
  // Brackets inside strings do not count.
  EXPECT_TRUE(Config::from_json_string(R"({"providers": [")" + std::string(1000, '[') + R"("]})"));
  e = error_of(R"({"threads": {"intra_op": 1000000}})");
  EXPECT_EQ(e, "config.json: threads.intra_op: expected at most 1024 threads, got 1000000");
  e = error_of(R"({"threads": {"inter_op": 1000000}})");
  EXPECT_EQ(e, "config.json: threads.inter_op: expected at most 1024 threads, got 1000000");
  EXPECT_TRUE(Config::from_json_string(R"({"threads": {"intra_op": 1024, "inter_op": 1024}})"));
  e = error_of(std::string(17 << 20, ' ') + "{}");
  EXPECT_NE(e.find("more than 16 MiB"), std::string::npos) << e;
}

// plugin_dirs loads code: an untrusted config may not name any.
TEST(ConfigTest, UntrustedConfigsMayNotLoadPlugins) {
  const std::string json = R"({"plugin_dirs": ["/tmp/evil"], "providers": ["reference"]})";
  auto untrusted = Config::from_json_string(json, "user.json", Config::Source::kUntrusted);
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.status().message(),
            "user.json: plugin_dirs: not allowed in an untrusted config: plugins run with the full rights of the "
            "process");
  auto trusted = Config::from_json_string(json, "operator.json");
  ASSERT_TRUE(trusted) << trusted.status().message();
  EXPECT_EQ(trusted->plugin_dirs, std::vector<std::string>{"/tmp/evil"});
  EXPECT_TRUE(Config::from_json_string(R"({"providers": ["reference"]})", "user.json", Config::Source::kUntrusted));
}

TEST(ConfigTest, OnlyRegularFilesAreRead) {
  auto zero = Config::from_json_file("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.status().message(), "/dev/zero: config is not a regular file");
  const std::string dir = testing::TempDir() + "/loom_config_fifo";
  std::filesystem::create_directories(dir);
  const std::string fifo = dir + "/config.json";
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto f = Config::from_json_file(fifo);  // would block forever if opened
  ASSERT_FALSE(f);
  EXPECT_NE(f.status().message().find("not a regular file"), std::string::npos) << f.status().message();
  std::filesystem::remove(fifo);
}

TEST(ConfigTest, FromFileNamesThePath) {
  const std::string dir = testing::TempDir() + "/loom_config_test";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/bad.json";
  std::ofstream(path) << R"({"threads": {"intra_op": "x"}})";
  auto c = Config::from_json_file(path);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().message(), path + ": threads.intra_op: expected a non-negative integer, got \"x\"");

  const std::string good = dir + "/good.json";
  std::ofstream(good) << R"({"providers": ["reference"]})";
  auto g = Config::from_json_file(good);
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(g->providers, std::vector<std::string>{"reference"});

  auto missing = Config::from_json_file(dir + "/missing.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("missing.json"), std::string::npos);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(ConfigTest, PluginPathIsPrependedInOrder) {
  CleanEnv clean;
  ScopedEnv env("LOOM_PLUGIN_PATH", "/env/one::/env/two:/cfg/b");
  Config c;
  c.plugin_dirs = {"/cfg/a", "/cfg/b"};
  ASSERT_TRUE(c.apply_environment());
  EXPECT_EQ(c.plugin_dirs, (std::vector<std::string>{"/env/one", "/env/two", "/cfg/b", "/cfg/a"}));
}

TEST(ConfigTest, ProvidersOverrideReplacesTheList) {
  CleanEnv clean;
  ScopedEnv env("LOOM_PROVIDERS", " cuda , reference");
  Config c;
  c.providers = {"cpu_onednn"};
  ASSERT_TRUE(c.apply_environment());
  EXPECT_EQ(c.providers, (std::vector<std::string>{"cuda", "reference"}));
}

TEST(ConfigTest, EmptyProvidersOverrideRestoresDefault) {
  CleanEnv clean;
  ScopedEnv env("LOOM_PROVIDERS", "");
  Config c;
  c.providers = {"cpu_onednn"};
  ASSERT_TRUE(c.apply_environment());
  EXPECT_TRUE(c.providers.empty());
}

TEST(ConfigTest, BadProvidersOverrideIsAnError) {
  CleanEnv clean;
  ScopedEnv env("LOOM_PROVIDERS", "a,,b");
  Config c;
  Status s = c.apply_environment();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("LOOM_PROVIDERS"), std::string::npos);
}

TEST(ConfigTest, LogLevelOverride) {
  CleanEnv clean;
  {
    ScopedEnv env("LOOM_LOG_LEVEL", "error");
    Config c;
    ASSERT_TRUE(c.apply_environment());
    EXPECT_EQ(c.log_level, "error");
  }
  {
    ScopedEnv env("LOOM_LOG_LEVEL", "loud");
    Config c;
    Status s = c.apply_environment();
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("LOOM_LOG_LEVEL"), std::string::npos);
    EXPECT_NE(s.message().find("loud"), std::string::npos);
    EXPECT_EQ(c.log_level, "warn");
  }
}

TEST(ConfigTest, NoOverridesLeaveConfigAlone) {
  CleanEnv clean;
  Config c;
  c.plugin_dirs = {"/x"};
  c.providers = {"reference"};
  ASSERT_TRUE(c.apply_environment());
  EXPECT_EQ(c.plugin_dirs, std::vector<std::string>{"/x"});
  EXPECT_EQ(c.providers, std::vector<std::string>{"reference"});
  EXPECT_EQ(c.log_level, "warn");
}

TEST(ConfigTest, ToJsonRoundTrips) {
  Config c;
  c.plugin_dirs = {"/p"};
  c.providers = {"cuda", "reference"};
  c.provider_options["cuda"]["device_id"] = "1";
  c.fallback = FallbackPolicy::kWarn;
  c.optimization_level = OptimizationLevel::kAll;
  c.intra_op_threads = 3;
  c.inter_op_threads = 1;
  c.log_level = "info";
  c.disabled_passes = {"a", "b"};
  c.stop_after_pass = 7;
  auto back = Config::from_json_string(c.to_json());
  ASSERT_TRUE(back) << back.status().message() << "\n" << c.to_json();
  EXPECT_EQ(back->plugin_dirs, c.plugin_dirs);
  EXPECT_EQ(back->providers, c.providers);
  EXPECT_EQ(back->provider_options, c.provider_options);
  EXPECT_EQ(back->fallback, c.fallback);
  EXPECT_EQ(back->optimization_level, c.optimization_level);
  EXPECT_EQ(back->intra_op_threads, 3);
  EXPECT_EQ(back->disabled_passes, c.disabled_passes);
  EXPECT_EQ(back->stop_after_pass, 7);
  EXPECT_EQ(back->inter_op_threads, 1);
  EXPECT_EQ(back->log_level, "info");
  // Every key appears, defaults included, so the effective config is explicit.
  auto defaults = Config().to_json();
  for (const char* key : {"plugin_dirs", "providers", "provider_options", "fallback", "optimization_level",
                          "threads", "log_level"})
    EXPECT_NE(defaults.find(std::string("\"") + key + "\""), std::string::npos) << key;
}

}  // namespace
}  // namespace loom
