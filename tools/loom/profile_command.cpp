// `loom profile`: reads a profile a session wrote (profile_trace.h has the
// format). Two verbs:
//   summarize TRACE.json [--top N] [--run K] [--json]
//       where the time of each run goes (profile_summary.h defines every
//       number), the costliest op types, totals per EP, session phases.
//   timeline TRACE.json --svg OUT.svg [--run K]
//       one run drawn as a self-contained SVG (profile_timeline.h).
// The verb and the trace are positional, which the shared flag parser does
// not take, so this command splits them off itself (Command::main_argv).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "model_feeds.h"
#include "profile_summary.h"
#include "profile_timeline.h"
#include "profile_trace.h"

namespace loom::tools {
namespace {

using profile::Summary;
using profile::Trace;
constexpr int64_t kDefaultTop = 10;

const FlagSpec kTopFlag{"top", "N", "rows of op types, passes and compiles to show (default 10)"};
const FlagSpec kJsonFlag{"json", "", "print the numbers as one JSON object"};
const FlagSpec kSvgFlag{"svg", "OUT.svg", "where to write the picture (required)"};

CommandSpec summarize_spec() {
  return {"profile summarize",
          "Summarize a Loom profile: per-run time breakdown (mean and median over runs), top op types, EPs, "
          "session phases.",
          "TRACE.json [--top N] [--run K] [--json]",
          {kTopFlag, {"run", "K", "only run K (default: every run, with mean and median)"}, kJsonFlag}};
}

CommandSpec timeline_spec() {
  return {"profile timeline", "Draw one run of a Loom profile as an SVG timeline, one lane per thread / device stream.",
          "TRACE.json --svg OUT.svg [--run K]",
          {kSvgFlag, {"run", "K", "the run to draw (default: the last run)"}}};
}

// Splits the single positional argument (the trace) off argv so the rest
// goes through the shared parser. Flags taking a value keep it.
Expected<std::pair<std::string, ParsedArgs>> parse_verb_args(const CommandSpec& spec, int argc, char** argv) {
  std::vector<char*> rest;
  std::optional<std::string> trace;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-", 0) == 0 && arg != "-") {
      rest.push_back(argv[i]);
      if (arg.rfind("--", 0) != 0 || arg.find('=') != std::string::npos) continue;
      for (const FlagSpec& f : spec.flags)
        if (f.name == arg.substr(2) && !f.value_name.empty() && i + 1 < argc) rest.push_back(argv[++i]);
      continue;
    }
    if (trace) return invalid_argument("unexpected argument '" + arg + "' (one trace file at a time)");
    trace = arg;
  }
  LOOM_ASSIGN_OR_RETURN(ParsedArgs args, parse_args(spec, static_cast<int>(rest.size()), rest.data()));
  if (!trace && !args.help()) return invalid_argument("a trace file is required (TRACE.json)");
  return std::make_pair(trace.value_or(""), std::move(args));
}

Expected<std::optional<int64_t>> parse_run_flag(const ParsedArgs& args) {
  auto text = args.value("run");
  if (!text) return std::optional<int64_t>();
  LOOM_ASSIGN_OR_RETURN(int64_t k, parse_int(*text, "--run"));
  return std::optional<int64_t>(k);
}

std::string join_ids(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : ", ") + std::to_string(id);
  return s.empty() ? "none" : s;
}

// Checks that run `k` is in the trace; the error names the file.
Status check_run(const Trace& trace, int64_t k) {
  const auto ids = trace.run_ids();
  if (std::find(ids.begin(), ids.end(), k) != ids.end()) return {};
  return not_found(trace.path + ": no run " + std::to_string(k) + " (runs: " + join_ids(ids) + ")");
}

// --- text output -----------------------------------------------------------

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

bool is_count(const std::string& key) { return key == "steps" || key == "copy_count" || key == "copy_bytes"; }

std::string metric_text(const profile::MetricValue& m, bool whole_counts) {
  if (!m.value) return "-";
  if (is_count(m.key)) return whole_counts ? fixed(*m.value, 0) : fixed(*m.value, 1);
  return fixed(*m.value, 3);
}

// Columns: first `left` left-aligned, the rest right-aligned.
void print_table(const std::vector<std::vector<std::string>>& rows, size_t left, const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      if (i > 0) line += "  ";
      line += i < left ? r[i] + (i + 1 < r.size() ? pad : "") : pad + r[i];
    }
    std::cout << line << "\n";
  }
}

void print_run_table(const Summary& s) {
  constexpr size_t kMaxRunColumns = 4;
  const bool several = s.runs.size() > 1;
  const bool per_run = s.runs.size() <= kMaxRunColumns;
  std::vector<int64_t> ids;
  for (const auto& r : s.runs) ids.push_back(r.run);
  if (several)
    std::cout << "runs: " << s.runs.size() << " (" << join_ids(ids) << "); "
              << (per_run ? "each run, then " : "") << "mean and median over the " << s.runs.size()
              << " runs (per-run values: --run K or --json)\n";
  else
    std::cout << "run " << s.runs.front().run
              << (s.runs.front().tag.empty() ? std::string() : " (tag '" + s.runs.front().tag + "')") << "\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{"", "unit"};
  if (per_run || !several)
    for (const auto& r : s.runs) head.push_back("run " + std::to_string(r.run));
  if (several) {
    head.push_back("mean");
    head.push_back("median");
  }
  rows.push_back(head);
  const size_t n = profile::metric_values(s.runs.front()).size();
  for (size_t i = 0; i < n; ++i) {
    const auto first = profile::metric_values(s.runs.front())[i];
    const std::string key = first.key;
    if (!s.has_device && key.rfind("device_", 0) == 0) continue;
    std::vector<std::string> row{first.label, key == "copy_bytes" ? "bytes" : is_count(key) ? "" : "ms"};
    if (per_run || !several)
      for (const auto& r : s.runs) row.push_back(metric_text(profile::metric_values(r)[i], true));
    if (several) {
      row.push_back(metric_text(s.mean[i], false));
      row.push_back(metric_text(s.median[i], false));
    }
    rows.push_back(row);
  }
  print_table(rows, 1, "  ");
}

// `first`: the heading of the first column (what the rows group by).
void print_op_rows(const std::vector<profile::OpRow>& ops, bool by_ep, bool device, const char* first = "op type") {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head;
  if (!by_ep) head.push_back(first);
  for (const char* h : {"EP", "calls", "total ms", "mean ms", "kernel ms", "% of kernel time"}) head.push_back(h);
  if (device) head.push_back("device ms");
  rows.push_back(head);
  for (const auto& o : ops) {
    std::vector<std::string> row;
    if (!by_ep) row.push_back(o.op_type.empty() ? "?" : o.op_type);
    row.push_back(o.ep.empty() ? "?" : o.ep);
    row.push_back(std::to_string(o.calls));
    row.push_back(fixed(o.total_ms, 3));
    row.push_back(fixed(o.mean_ms, 3));
    row.push_back(fixed(o.kernel_ms, 3));
    row.push_back(fixed(o.percent, 1));
    if (device) row.push_back(fixed(o.device_ms, 3));
    rows.push_back(row);
  }
  print_table(rows, by_ep ? 1 : 2, "  ");
}

// "(3 partitions)", or nothing for 0. (Built with append: GCC 12 warns falsely
// on `"(" + std::to_string(n)`.)
std::string count_note(int64_t n, const char* one, const char* many) {
  if (n == 0) return {};
  std::string s = "(";
  s.append(std::to_string(n)).append(" ").append(n == 1 ? one : many).append(")");
  return s;
}

void print_phases(const profile::Phases& p) {
  std::cout << "session phases:\n";
  std::vector<std::vector<std::string>> rows;
  auto phase = [&](const char* name, const std::optional<double>& v, std::string note = {}) {
    rows.push_back({name, v ? fixed(*v, 3) + " ms" : "-", note});
  };
  phase("load", p.load_ms);
  phase("transform", p.transform_ms, count_note(p.pass_count, "pass", "passes"));
  for (const auto& pass : p.slowest_passes)
    rows.push_back({"  pass " + pass.name, fixed(pass.total_ms, 3) + " ms",
                    (pass.calls > 1 ? std::to_string(pass.calls) + " calls" : std::string()) +
                        (pass.changed ? std::string(pass.calls > 1 ? ", " : "") + "changed" : "")});
  phase("partition", p.partition_ms);
  phase("compile", p.compile_ms, count_note(p.compile_count, "partition", "partitions"));
  for (const auto& c : p.slowest_compiles)
    rows.push_back({"  " + (c.partition.empty() ? std::string("?") : c.partition), fixed(c.ms, 3) + " ms",
                    c.ep.empty() ? "" : "on " + c.ep});
  phase("plan", p.plan_ms);
  // Phase names left, times right, notes left.
  size_t w0 = 0, w1 = 0;
  for (const auto& r : rows) {
    w0 = std::max(w0, r[0].size());
    w1 = std::max(w1, r[1].size());
  }
  for (const auto& r : rows) {
    std::string line = "  " + r[0] + std::string(w0 - r[0].size() + 2, ' ') + std::string(w1 - r[1].size(), ' ') + r[1];
    if (!r[2].empty()) line += "  " + r[2];
    std::cout << line << "\n";
  }
}

void print_text(const Trace& trace, const Summary& s, int64_t top) {
  std::cout << "profile " << trace.path;
  if (!trace.model.empty()) std::cout << " (model " << trace.model << ")";
  std::cout << "\n";
  if (!trace.providers.empty()) {
    std::string p;
    for (const auto& name : trace.providers) p += (p.empty() ? "" : ", ") + name;
    std::cout << "providers: " << p << "\n";
  }
  if (trace.skipped) std::cout << "skipped " << trace.skipped << " malformed events\n";
  std::cout << "\n";
  if (s.runs.empty()) {
    std::cout << "no runs in the profile\n";
  } else {
    print_run_table(s);
    std::cout << "\ntop " << std::min<int64_t>(top, s.op_groups) << " of " << s.op_groups
              << " op types by total step time (" << fixed(s.op_total_ms, 3) << " ms in kernel and partition steps"
              << (s.runs.size() > 1 ? ", summed over the runs" : "") << "):\n";
    print_op_rows(s.ops, false, s.has_device);
    std::cout << "\nby EP:\n";
    print_op_rows(s.eps, true, s.has_device);
    if (!s.parts.empty()) {
      std::cout << "\ninside the steps, by what the plugins said ran (% of the steps' time):\n";
      print_op_rows(s.parts, false, false, "what ran");
    }
  }
  std::cout << "\n";
  print_phases(s.phases);
}

// --- JSON output -----------------------------------------------------------

using nlohmann::ordered_json;

// Rounded to the nanosecond so sums of round µs print as written.
ordered_json json_number(double v) { return std::round(v * 1e6) / 1e6; }

ordered_json json_metrics(const std::vector<profile::MetricValue>& values, bool whole_counts) {
  ordered_json o = ordered_json::object();
  for (const auto& m : values) {
    if (!m.value) {
      o[m.key] = nullptr;
    } else if (whole_counts && is_count(m.key)) {
      o[m.key] = static_cast<int64_t>(std::llround(*m.value));
    } else {
      o[m.key] = json_number(*m.value);
    }
  }
  return o;
}

ordered_json json_ops(const std::vector<profile::OpRow>& ops, bool by_ep, bool device) {
  ordered_json a = ordered_json::array();
  for (const auto& o : ops) {
    ordered_json row;
    if (!by_ep) row["op_type"] = o.op_type;
    row["ep"] = o.ep;
    row["calls"] = o.calls;
    row["total_ms"] = json_number(o.total_ms);
    row["mean_ms"] = json_number(o.mean_ms);
    row["kernel_ms"] = json_number(o.kernel_ms);
    row["percent_of_kernel_time"] = json_number(o.percent);
    if (device) row["device_ms"] = json_number(o.device_ms);
    a.push_back(row);
  }
  return a;
}

void print_json(const Trace& trace, const Summary& s) {
  auto opt = [](const std::optional<double>& v) { return v ? json_number(*v) : ordered_json(nullptr); };
  ordered_json j;
  j["trace"] = trace.path;
  j["loom_profile_version"] = trace.version;
  j["model"] = trace.model;
  j["providers"] = trace.providers;
  j["skipped_events"] = trace.skipped;
  j["runs"] = ordered_json::array();
  for (const auto& r : s.runs) {
    ordered_json run;
    run["run"] = r.run;
    run["tag"] = r.tag;
    const ordered_json metrics = json_metrics(profile::metric_values(r), true);
    for (const auto& [k, v] : metrics.items()) run[k] = v;
    j["runs"].push_back(run);
  }
  if (s.runs.size() > 1) {
    j["aggregate"] = {{"runs", s.runs.size()},
                      {"mean", json_metrics(s.mean, false)},
                      {"median", json_metrics(s.median, false)}};
  } else {
    j["aggregate"] = nullptr;
  }
  j["has_device"] = s.has_device;
  j["op_groups"] = s.op_groups;
  j["op_total_ms"] = json_number(s.op_total_ms);
  j["ops"] = json_ops(s.ops, false, s.has_device);
  j["eps"] = json_ops(s.eps, true, s.has_device);
  j["parts"] = json_ops(s.parts, false, false);
  const auto& p = s.phases;
  ordered_json ph;
  ph["load_ms"] = opt(p.load_ms);
  ph["transform_ms"] = opt(p.transform_ms);
  ph["partition_ms"] = opt(p.partition_ms);
  ph["compile_ms"] = opt(p.compile_ms);
  ph["plan_ms"] = opt(p.plan_ms);
  ph["pass_count"] = p.pass_count;
  ph["compile_count"] = p.compile_count;
  ph["passes"] = ordered_json::array();
  for (const auto& pass : p.slowest_passes)
    ph["passes"].push_back(
        {{"name", pass.name}, {"calls", pass.calls}, {"total_ms", json_number(pass.total_ms)}, {"changed", pass.changed}});
  ph["compiles"] = ordered_json::array();
  for (const auto& c : p.slowest_compiles)
    ph["compiles"].push_back({{"partition", c.partition}, {"ep", c.ep}, {"ms", json_number(c.ms)}});
  j["phases"] = ph;
  // Names come from the trace: replace invalid UTF-8 rather than throw.
  std::cout << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

// --- verbs -----------------------------------------------------------------

// What both verbs read: the trace path, the flags and --run.
struct VerbInput {
  std::string path;
  ParsedArgs args;
  std::optional<int64_t> run;
};

// Parses a verb's arguments; returns an exit code when the verb is done
// already (a usage error, or --help printed), else fills `in`.
std::optional<int> parse_verb(const CommandSpec& spec, int argc, char** argv, VerbInput& in) {
  auto parsed = parse_verb_args(spec, argc, argv);
  if (!parsed) return report_usage_error(spec, parsed.status().message());
  in.path = parsed->first;
  in.args = parsed->second;
  if (in.args.help()) {
    std::cout << command_usage(spec);
    return kExitOk;
  }
  auto run = parse_run_flag(in.args);
  if (!run) return report_usage_error(spec, run.status().message());
  in.run = *run;
  return std::nullopt;
}

// The trace, checked to hold --run when given.
Expected<Trace> load_trace(const VerbInput& in) {
  LOOM_ASSIGN_OR_RETURN(Trace trace, profile::read_trace(in.path));
  if (in.run) LOOM_RETURN_IF_ERROR(check_run(trace, *in.run));
  return trace;
}

int summarize_main(int argc, char** argv) {
  const CommandSpec spec = summarize_spec();
  VerbInput in;
  if (auto done = parse_verb(spec, argc, argv, in)) return *done;
  int64_t top = kDefaultTop;
  if (auto t = in.args.value("top")) {
    auto v = parse_int(*t, "--top");
    if (!v || *v < 1 || *v > 1000000)
      return report_usage_error(spec, "--top: expected an integer from 1 to 1000000, got " + *t);
    top = *v;
  }
  auto trace = load_trace(in);
  if (!trace) return report_failure(spec.name, trace.status().message());
  const Summary s = profile::summarize(*trace, in.run, static_cast<size_t>(top));
  if (in.args.has("json"))
    print_json(*trace, s);
  else
    print_text(*trace, s, top);
  return kExitOk;
}

int timeline_main(int argc, char** argv) {
  const CommandSpec spec = timeline_spec();
  VerbInput in;
  if (auto done = parse_verb(spec, argc, argv, in)) return *done;
  auto svg_path = in.args.value("svg");
  if (!svg_path) return report_usage_error(spec, "--svg is required");
  auto trace = load_trace(in);
  if (!trace) return report_failure(spec.name, trace.status().message());
  int64_t k = 0;
  if (in.run) {
    k = *in.run;
  } else {
    const auto ids = trace->run_ids();
    if (ids.empty()) return report_failure(spec.name, in.path + ": no runs to draw");
    k = ids.back();
  }
  profile::TimelineStats stats;
  const std::string svg = profile::render_timeline_svg(*trace, k, &stats);
  std::ofstream out(*svg_path, std::ios::binary | std::ios::trunc);
  if (!out) return report_failure(spec.name, *svg_path + ": cannot write (" + std::strerror(errno) + ")");
  out << svg;
  out.close();
  if (!out) return report_failure(spec.name, *svg_path + ": write failed");
  std::cout << "wrote " << *svg_path << ": run " << k << ", " << stats.spans << " spans in " << stats.lanes
            << " lanes\n";
  return kExitOk;
}

CommandSpec profile_spec() {
  return {"profile",
          "Read a Loom profile trace: summarize where time goes, or draw one run as an SVG timeline.",
          "summarize TRACE.json [--top N] [--run K] [--json]\n"
          "       loom profile timeline TRACE.json --svg OUT.svg [--run K]",
          {kTopFlag,
           {"run", "K", "the run to summarize or draw (timeline default: the last run)"},
           kJsonFlag,
           {"svg", "OUT.svg", "timeline: where to write the picture (required)"}}};
}

int profile_argv_main(int argc, char** argv) {
  const CommandSpec spec = profile_spec();
  if (argc < 1) return report_usage_error(spec, "expected a verb: summarize or timeline");
  const std::string verb = argv[0];
  if (verb == "--help" || verb == "-h") {
    std::cout << command_usage(spec);
    return kExitOk;
  }
  if (verb == "summarize") return summarize_main(argc - 1, argv + 1);
  if (verb == "timeline") return timeline_main(argc - 1, argv + 1);
  return report_usage_error(spec, "unknown verb '" + verb + "' (expected summarize or timeline)");
}

int profile_parsed_main(const ParsedArgs&) {
  // Not reached: main.cpp hands `profile` its raw arguments (main_argv).
  return report_failure("profile", "expected a verb: summarize or timeline");
}

}  // namespace

Command profile_command() {
  Command c{profile_spec(), profile_parsed_main};
  c.main_argv = profile_argv_main;
  return c;
}

}  // namespace loom::tools
