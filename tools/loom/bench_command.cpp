// `loom bench`: times one model in this process, like onnxruntime_perf_test:
// session creation, warm-up runs, then timed runs. Reports wall latency
// (median / p90 / min), process CPU time per run and peak RSS, as a table or
// as one JSON object (--json) whose keys bench/run_benchmarks.py and
// bench/ort_bench.js share. Times are milliseconds, memory MiB ("MB").
//
// --device-io MEMORY: inputs are copied once, before the warm-up, into
// buffers of that memory kind and bound in place, and outputs are left there
// (Session::run on an IoBinding), so the timed runs make no host<->device
// copies of inputs or outputs, as timings of frameworks with their tensors
// already on the GPU measure. A bound run returns when its streams are idle.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "commands.h"
#include "loom/io_binding.h"
#include "loom/session.h"
#include "model_feeds.h"

namespace loom::tools {
namespace {

const char* kName = "bench";
constexpr int kDefaultWarmup = 5;
constexpr int kDefaultRuns = 20;

struct BenchRequest {
  std::string model;
  FeedRequest feeds;
  std::vector<std::string> providers;
  int threads = 0;  // 0: the config's (or the EPs') default
  int warmup = kDefaultWarmup;
  int runs = kDefaultRuns;
  bool json = false;
  std::string device_io;  // memory kind for --device-io; empty: host IO (run_values)
  int idle_ms = 0;        // --idle-ms: CPU use measured over this long with the session idle
};

// Syntax checks only: anything wrong here is a usage error (exit 2).
Expected<BenchRequest> parse_request(const ParsedArgs& args) {
  BenchRequest r;
  auto model = args.value("model");
  if (!model) return invalid_argument("--model is required");
  r.model = *model;
  LOOM_ASSIGN_OR_RETURN(r.feeds, parse_feed_request(args));
  if (auto p = args.value("providers")) r.providers = split_list(*p);
  LOOM_ASSIGN_OR_RETURN(r.threads, parse_count(args, "threads", 0, 0));
  LOOM_ASSIGN_OR_RETURN(r.warmup, parse_count(args, "warmup", kDefaultWarmup, 0));
  LOOM_ASSIGN_OR_RETURN(r.runs, parse_count(args, "runs", kDefaultRuns, 1));
  LOOM_ASSIGN_OR_RETURN(r.idle_ms, parse_count(args, "idle-ms", 0, 0, 60000));
  r.json = args.has("json");
  if (auto memory = args.value("device-io")) {
    if (memory->empty()) return invalid_argument("--device-io: expected a memory kind (cpu, or an EP's, e.g. cuda)");
    r.device_io = *memory;
  }
  return r;
}

double wall_ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// CPU time of every thread of this process (EP thread pools included), in ms.
double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Peak resident set size of this process so far, in MiB. VmHWM first:
// ru_maxrss survives exec on Linux, so a bench started by a big parent (a
// Python driver holding the model) would report the parent's peak.
double peak_rss_mb() {
  if (std::ifstream status("/proc/self/status"); status) {
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // kB
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

struct LatencyStats {
  double median = 0, p90 = 0, min = 0, mean = 0;
};

// Median averages the two middle values of an even count; p90 is the
// nearest-rank percentile (the smallest value >= 90 % of the runs).
LatencyStats summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  LatencyStats s;
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.p90 = ms[static_cast<size_t>(std::ceil(0.9 * n)) - 1];
  s.min = ms.front();
  for (double v : ms) s.mean += v / n;
  return s;
}

struct BenchResult {
  double create_ms = 0;
  double first_run_ms = 0;  // the first warm-up run (or timed run when --warmup 0)
  std::vector<double> latencies_ms;  // timed runs, in run order
  LatencyStats latency;
  double cpu_ms = 0;  // process CPU time per timed run
  // --idle-ms: process CPU time over that wait after the runs, as a share of
  // one core (threads that spin or poll between runs show here); -1 unmeasured.
  double idle_cpu_pct = -1;
  double peak_rss_mb = 0;
  std::vector<std::string> providers;             // asked for, or every available one
  std::vector<std::pair<std::string, int>> nodes;  // provider -> nodes it runs
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string fixed(double v, int digits = 3) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

void print_json(const BenchRequest& r, const BenchResult& b) {
  std::string providers, nodes, latencies;
  for (const auto& p : b.providers) providers += (providers.empty() ? "" : ", ") + json_string(p);
  for (double ms : b.latencies_ms) latencies += (latencies.empty() ? "" : ", ") + fixed(ms);
  for (const auto& [p, n] : b.nodes) nodes += (nodes.empty() ? "" : ", ") + json_string(p) + ": " + std::to_string(n);
  std::cout << "{\"runtime\": \"loom\", \"model\": " << json_string(r.model) << ", \"providers\": [" << providers
            << "], \"nodes_per_provider\": {" << nodes << "}, \"threads\": " << r.threads << ", \"warmup\": "
            << r.warmup << ", \"runs\": " << r.runs << ", \"create_ms\": " << fixed(b.create_ms)
            << ", \"first_run_ms\": " << fixed(b.first_run_ms) << ", \"median_ms\": " << fixed(b.latency.median)
            << ", \"p90_ms\": " << fixed(b.latency.p90) << ", \"min_ms\": " << fixed(b.latency.min)
            << ", \"mean_ms\": " << fixed(b.latency.mean) << ", \"cpu_ms\": " << fixed(b.cpu_ms)
            << ", \"peak_rss_mb\": " << fixed(b.peak_rss_mb, 1)
            << ", \"device_io\": " << (r.device_io.empty() ? "null" : json_string(r.device_io))
            << ", \"idle_cpu_pct_of_one_core\": " << (b.idle_cpu_pct < 0 ? "null" : fixed(b.idle_cpu_pct, 2))
            << ", \"latencies_ms\": [" << latencies << "]}\n";
}

void print_table(const BenchRequest& r, const BenchResult& b) {
  std::string providers, nodes;
  for (const auto& p : b.providers) providers += (providers.empty() ? "" : ",") + p;
  for (const auto& [p, n] : b.nodes) nodes += (nodes.empty() ? "" : ", ") + p + " " + std::to_string(n);
  auto row = [](const std::string& label, const std::string& value) {
    std::cout << "  " << label << std::string(label.size() < 16 ? 16 - label.size() : 1, ' ') << value << "\n";
  };
  std::cout << "model " << r.model << "\n";
  row("providers", providers + " (nodes: " + nodes + ")");
  row("threads", r.threads > 0 ? std::to_string(r.threads) : "default");
  row("device io", r.device_io.empty() ? "no (inputs and outputs in host memory, copied every run)"
                                       : r.device_io + " (inputs copied once, outputs left there)");
  row("session create", fixed(b.create_ms) + " ms");
  row("warm-up", std::to_string(r.warmup) + (r.warmup == 1 ? " run" : " runs") +
                     (r.warmup > 0 ? ", first " + fixed(b.first_run_ms) + " ms" : ""));
  row("timed runs", std::to_string(r.runs));
  row("median", fixed(b.latency.median) + " ms");
  row("p90", fixed(b.latency.p90) + " ms");
  row("min", fixed(b.latency.min) + " ms");
  row("mean", fixed(b.latency.mean) + " ms");
  row("cpu per run", fixed(b.cpu_ms) + " ms (process CPU time, all threads)");
  row("peak rss", fixed(b.peak_rss_mb, 1) + " MB");
  if (b.idle_cpu_pct >= 0)
    row("idle cpu", fixed(b.idle_cpu_pct, 2) + " % of one core over " + std::to_string(r.idle_ms) + " ms after the runs");
}

// --device-io: every input copied once into a buffer of memory kind
// `memory` and bound in place; every output left in that memory. `buffers`
// keeps the input buffers alive for the runs. Errors name the flag.
Status bind_device_io(const Session& session, const std::string& memory, const std::map<std::string, Value>& feeds,
                      IoBinding& io, std::vector<std::shared_ptr<DeviceBuffer>>& buffers) {
  const std::string flag = "--device-io '" + memory + "'";
  // Checked before any input, so the error is the same for a model without
  // inputs (allocate names the memory kinds the session has).
  if (auto probe = session.allocate(memory, DType::kUint8, {1}); !probe)
    return probe.status().with_context(flag);
  for (const auto& [name, value] : feeds) {
    if (!value.is_tensor()) {
      const std::string kind = value.is_none() ? "an empty optional" : "a sequence";
      return invalid_argument(flag + ": input '" + name + "' is " + kind + "; device IO binds tensors only");
    }
    const Tensor& t = value.tensor();
    auto buffer = session.allocate(memory, t.dtype(), t.dims());
    if (!buffer) return buffer.status().with_context(flag + ": input '" + name + "'");
    LOOM_RETURN_IF_ERROR(session.copy_from_host(t, (*buffer)->tensor()).with_context(flag + ": input '" + name + "'"));
    io.bind_input(name, (*buffer)->tensor());
    buffers.push_back(std::move(*buffer));
  }
  for (const ValueInfo& out : session.outputs()) {
    if (out.kind != ValueKind::kTensor)
      return invalid_argument(flag + ": output '" + out.name + "' is not a tensor; device IO binds tensors only");
    io.bind_output_to_memory(out.name, memory);
  }
  return Status::ok();
}

int bench_main(const ParsedArgs& args) {
  auto request = parse_request(args);
  if (!request) return report_usage_error(bench_command().spec, request.status().message());
  const BenchRequest& r = *request;

  auto config = load_config(args);
  if (!config) return report_failure(kName, config.status().message());
  if (r.threads > 0) config->intra_op_threads = r.threads;
  auto env = Environment::create(*config);
  if (!env) return report_failure(kName, env.status().message());

  BenchResult b;
  SessionOptions options;
  options.providers = r.providers;
  auto start = std::chrono::steady_clock::now();
  auto session = Session::create(*env, r.model, options);
  b.create_ms = wall_ms_since(start);
  if (!session) return report_failure(kName, session.status().message());
  b.providers = !r.providers.empty() ? r.providers
                : !(*env)->config().providers.empty() ? (*env)->config().providers
                                                      : (*env)->available_providers();
  for (const auto& p : (*session)->placement().providers) b.nodes.emplace_back(p.provider, p.node_count);

  auto feeds = gather_feeds(**session, r.feeds, false);
  if (!feeds) return report_failure(kName, feeds.status().message());

  IoBinding io;
  std::vector<std::shared_ptr<DeviceBuffer>> device_inputs;
  if (!r.device_io.empty()) {
    if (Status st = bind_device_io(**session, r.device_io, *feeds, io, device_inputs); !st)
      return report_failure(kName, st.message());
  }
  auto run_once = [&](double* wall_ms) -> Status {
    const auto t0 = std::chrono::steady_clock::now();
    Status st;
    if (r.device_io.empty()) {
      auto outputs = (*session)->run_values(*feeds);
      if (!outputs) st = outputs.status();
    } else {
      st = (*session)->run(io);  // returns when the run's streams are idle
    }
    *wall_ms = wall_ms_since(t0);
    return st;
  };
  for (int i = 0; i < r.warmup; ++i) {
    double ms = 0;
    if (Status st = run_once(&ms); !st) return report_failure(kName, "warm-up run: " + st.message());
    if (i == 0) b.first_run_ms = ms;
  }
  b.latencies_ms.resize(r.runs);
  const double cpu_start = process_cpu_ms();
  for (int i = 0; i < r.runs; ++i) {
    if (Status st = run_once(&b.latencies_ms[i]); !st) return report_failure(kName, "timed run: " + st.message());
  }
  b.cpu_ms = (process_cpu_ms() - cpu_start) / r.runs;
  if (r.idle_ms > 0) {
    const double idle_start = process_cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(r.idle_ms));
    b.idle_cpu_pct = 100.0 * (process_cpu_ms() - idle_start) / r.idle_ms;
  }
  if (r.warmup == 0) b.first_run_ms = b.latencies_ms.front();
  b.latency = summarize(b.latencies_ms);
  b.peak_rss_mb = peak_rss_mb();

  if (r.json) {
    print_json(r, b);
  } else {
    print_table(r, b);
  }
  if (args.value("profile")) {
    // Written after timing, so writing it costs the runs nothing.
    auto path = (*session)->end_profiling();
    if (!path) return report_failure(kName, path.status().message());
    if (!r.json) std::cout << "profile written to " << *path << "\n";
  }
  std::cout.flush();
  return kExitOk;
}

}  // namespace

Command bench_command() {
  return Command{
      CommandSpec{
          "bench",
          "Time a model: session creation, warm-up, then median / p90 / min latency, CPU time per run and peak RSS.",
          "--model M.onnx [--input NAME=PATH.pb ...] [--threads N] [--runs R] [--warmup W] [--device-io MEMORY] "
          "[--json] [options]",
          {
              {"model", "M.onnx", "the model to time (required)"},
              {"input", "NAME=PATH.pb", "feed input NAME from a TensorProto file (SequenceProto / OptionalProto / "
                                        "MapProto for sequence / optional / map inputs; repeatable); inputs not "
                                        "given get "
                                        "random values", true},
              {"providers", "a,b", "execution providers in priority order"},
              {"config", "F", "JSON configuration file"},
              {"profile", "OUT.json", "profile the session and every run into OUT.json (Chrome trace; read it "
                                      "with `loom profile summarize|timeline`)"},
              {"threads", "N", "intra-op threads for every provider (sets threads.intra_op; default: the "
                               "config's, else the providers' own default)"},
              {"runs", "R", "timed runs (default " + std::to_string(kDefaultRuns) + ")"},
              {"idle-ms", "MS", "after the runs, wait MS milliseconds with the session idle and report the process's "
                                "CPU use over that wait as a share of one core (threads that spin between runs "
                                "show there; default 0: not measured)"},
              {"warmup", "W", "untimed runs before the timed ones (default " + std::to_string(kDefaultWarmup) + ")"},
              {"dim", "SYMBOL=VALUE", "size of a symbolic input dimension for random inputs (default 1; "
                                      "repeatable)", true},
              {"seed", "N", "seed for random inputs (default 0)"},
              {"device-io", "MEMORY", "copy each input once, before the warm-up, into memory kind MEMORY (cpu, or "
                                      "an EP's, e.g. cuda) and leave outputs there: runs bind them in place "
                                      "(IoBinding) instead of copying inputs and outputs every run; tensors only"},
              {"json", "", "print one JSON object (create_ms, first_run_ms, median_ms, p90_ms, min_ms, mean_ms, "
                           "cpu_ms, peak_rss_mb, latencies_ms, runs, warmup, threads, device_io, "
                           "idle_cpu_pct_of_one_core, providers, model) instead of a table"},
          }},
      bench_main};
}

}  // namespace loom::tools
