#include "profile_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "common/xml_escape.h"

namespace loom::tools::profile {
namespace {

// Layout, in SVG user units (px).
constexpr double kLabelWidth = 190;
constexpr double kPlotWidth = 1200;
constexpr double kRightMargin = 20;
constexpr double kAxisY = 52;    // baseline of the time axis
constexpr double kLanesTop = 62;
constexpr double kRowHeight = 18;
constexpr double kSpanHeight = 15;
constexpr double kLanePad = 4;
constexpr double kCharWidth = 6.1;  // 10px sans-serif, a generous average

const char* const kPalette[] = {"#4e79a7", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8", "#8cd17d"};

std::string num(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string ms_text(double us) { return num(us / 1000.0, 3) + " ms"; }

// The first `chars` characters of s, not splitting a UTF-8 sequence.
std::string utf8_prefix(const std::string& s, size_t chars) {
  size_t i = 0, n = 0;
  while (i < s.size() && n < chars) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++n;
  }
  return s.substr(0, i);
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

// The label that fits in `width` px: the whole name, a prefix with an
// ellipsis, or nothing.
std::string fitted_label(const std::string& name, double width) {
  const double room = width - 4;
  const size_t len = utf8_length(name);
  if (len * kCharWidth <= room) return name;
  const auto fits = static_cast<size_t>(std::max(0.0, room / kCharWidth));
  if (fits < 4) return {};
  return utf8_prefix(name, fits - 1) + "\u2026";
}

std::string tooltip(const Span& s) {
  std::string t = s.name.empty() ? "(unnamed)" : s.name;
  auto line = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) t += "\n" + label + ": " + value;
  };
  line("category", s.cat);
  line("kind", s.kind);
  line("op type", s.op_type);
  line("EP", s.ep);
  if (s.run) line("run", std::to_string(*s.run));
  if (s.step) line("step", std::to_string(*s.step));
  if (s.stream) line("stream", std::to_string(*s.stream));
  line("tag", s.tag);
  line("pass", s.pass);
  line("partition", s.partition);
  line("start", ms_text(s.ts));
  line("duration", ms_text(s.dur));
  if (s.kernel_us) line("kernel", ms_text(*s.kernel_us));
  line("inputs", s.inputs);
  line("outputs", s.outputs);
  if (s.bytes > 0) line("bytes", num(s.bytes, 0));
  return t;
}

// A step of "nice" length (1, 2 or 5 times a power of ten) giving about
// `target` ticks over `range`.
double tick_step(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

struct Placed {
  const Span* span;
  int depth;
};

}  // namespace

std::string span_colour(const Span& s) {
  const std::string& kind = s.cat == "device" ? s.op_type : s.kind;
  if (s.cat == "run") return "#bdbdbd";
  if (s.cat == "executor") return "#dcdcdc";
  if (s.cat == "session") return "#9ecae1";
  if (kind == "copy") return "#f4a261";
  if (kind == "record" || kind == "wait" || kind == "barrier") return "#c6b5e0";
  if (s.cat == "step" || s.cat == "device") {
    if (s.op_type.empty()) return "#a9c8a0";
    uint32_t h = 2166136261u;  // FNV-1a: the same op type gets the same colour in every picture
    for (unsigned char c : s.op_type) h = (h ^ c) * 16777619u;
    return kPalette[h % (sizeof kPalette / sizeof kPalette[0])];
  }
  return "#cccccc";
}

std::string render_timeline_svg(const Trace& trace, int64_t run, TimelineStats* stats) {
  // The window: the run's own events, then anything else overlapping it.
  double t0 = 0, t1 = 0;
  bool any = false;
  for (const Span& s : trace.spans)
    if (s.run == run) {
      t0 = any ? std::min(t0, s.ts) : s.ts;
      t1 = any ? std::max(t1, s.end()) : s.end();
      any = true;
    }
  std::map<Lane, std::vector<const Span*>> lanes;
  for (const Span& s : trace.spans) {
    const bool in_run = s.run == run;
    const bool overlaps = !s.run && any && s.ts < t1 && s.end() > t0;
    if (in_run || overlaps) lanes[{s.pid, s.tid}].push_back(&s);
  }
  if (!(t1 > t0)) t1 = t0 + 1;  // a run of zero length still gets an axis

  const double us_per_px = (t1 - t0) / kPlotWidth;
  auto x_of = [&](double t) { return kLabelWidth + (t - t0) / us_per_px; };

  // Nesting inside a lane: a span starting before the enclosing one ends sits
  // one row below it.
  std::map<Lane, std::vector<Placed>> placed;
  std::map<Lane, int> rows;
  for (auto& [lane, spans] : lanes) {
    std::stable_sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
    std::vector<double> open_ends;
    int max_rows = 1;
    for (const Span* s : spans) {
      while (!open_ends.empty() && open_ends.back() <= s->ts) open_ends.pop_back();
      placed[lane].push_back({s, static_cast<int>(open_ends.size())});
      open_ends.push_back(s->end());
      max_rows = std::max(max_rows, static_cast<int>(open_ends.size()));
    }
    rows[lane] = max_rows;
  }

  double lanes_height = 0;
  for (const auto& [lane, n] : rows) lanes_height += n * kRowHeight + 2 * kLanePad;
  const double width = kLabelWidth + kPlotWidth + kRightMargin;
  const double height = kLanesTop + lanes_height + 30;

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width, 0) << "\" height=\"" << num(height, 0)
    << "\" viewBox=\"0 0 " << num(width, 0) << ' ' << num(height, 0)
    << "\" font-family=\"sans-serif\" font-size=\"10\" style=\"background:#ffffff\">\n";
  std::string title = "loom profile: run " + std::to_string(run);
  if (!trace.model.empty()) title += " of " + trace.model;
  title += " (" + ms_text(t1 - t0) + ")";
  o << "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" << xml_escape(title) << "</text>\n";

  // Axis: ms since the session started, with gridlines through the lanes.
  const double lanes_bottom = kLanesTop + lanes_height;
  o << "<g class=\"axis\" stroke=\"#888888\">\n<line x1=\"" << num(kLabelWidth) << "\" y1=\"" << num(kAxisY)
    << "\" x2=\"" << num(kLabelWidth + kPlotWidth) << "\" y2=\"" << num(kAxisY) << "\"/>\n";
  const double range_ms = (t1 - t0) / 1000.0;
  const double step = tick_step(range_ms, 10);
  const int digits = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  std::string tick_labels;
  const auto first_tick = static_cast<int64_t>(std::ceil(t0 / 1000.0 / step - 1e-9));
  const auto last_tick = static_cast<int64_t>(std::floor(t1 / 1000.0 / step + 1e-9));
  for (int64_t i = first_tick; i <= last_tick && i - first_tick <= 100; ++i) {
    const double t = static_cast<double>(i) * step;
    const double x = x_of(t * 1000.0);
    o << "<line x1=\"" << num(x) << "\" y1=\"" << num(kAxisY - 4) << "\" x2=\"" << num(x) << "\" y2=\""
      << num(lanes_bottom) << "\" stroke=\"#e4e4e4\"/>\n";
    tick_labels += "<text x=\"" + num(x) + "\" y=\"" + num(kAxisY - 7) + "\" text-anchor=\"middle\">" +
                   num(t, digits) + "</text>\n";
  }
  o << "</g>\n<g class=\"ticks\">\n" << tick_labels << "<text x=\"" << num(kLabelWidth - 6) << "\" y=\""
    << num(kAxisY - 7) << "\" text-anchor=\"end\">ms</text>\n</g>\n";

  TimelineStats st;
  double y = kLanesTop;
  for (const auto& [lane, spans] : placed) {
    const double h = rows[lane] * kRowHeight + 2 * kLanePad;
    ++st.lanes;
    o << "<g class=\"lane\">\n<line x1=\"0\" y1=\"" << num(y) << "\" x2=\"" << num(width) << "\" y2=\"" << num(y)
      << "\" stroke=\"#cccccc\"/>\n";
    o << "<text class=\"lane-label\" x=\"8\" y=\"" << num(y + kLanePad + kRowHeight / 2 + 3) << "\">"
      << xml_escape(trace.lane_name(lane)) << "</text>\n";
    for (const Placed& p : spans) {
      const Span& s = *p.span;
      const double x = x_of(s.ts);
      const double w = std::max(0.5, s.dur / us_per_px);
      const double ry = y + kLanePad + p.depth * kRowHeight;
      o << "<rect class=\"span\" x=\"" << num(x) << "\" y=\"" << num(ry) << "\" width=\"" << num(w) << "\" height=\""
        << num(kSpanHeight) << "\" fill=\"" << span_colour(s) << "\" stroke=\"#555555\" stroke-width=\"0.3\"><title>"
        << xml_escape(tooltip(s)) << "</title></rect>\n";
      ++st.spans;
      const std::string label = fitted_label(s.name, w);
      if (!label.empty())
        o << "<text x=\"" << num(x + 2) << "\" y=\"" << num(ry + kSpanHeight - 4)
          << "\" pointer-events=\"none\">" << xml_escape(label) << "</text>\n";
    }
    o << "</g>\n";
    y += h;
  }
  o << "<line x1=\"0\" y1=\"" << num(y) << "\" x2=\"" << num(width) << "\" y2=\"" << num(y)
    << "\" stroke=\"#cccccc\"/>\n";
  o << "<text x=\"8\" y=\"" << num(y + 18) << "\" fill=\"#666666\">" << st.spans << " spans in " << st.lanes
    << " lanes; hover a span for details</text>\n</svg>\n";
  if (stats != nullptr) *stats = st;
  return o.str();
}

}  // namespace loom::tools::profile
