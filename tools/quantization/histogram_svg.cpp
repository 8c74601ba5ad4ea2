#include "quantization/histogram_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/xml_escape.h"

namespace loom::quant {
namespace {

using tools::xml_escape;

constexpr int kPanelWidth = 360, kPanelHeight = 170, kColumns = 3, kMargin = 10;
constexpr int kPlotLeft = 10, kPlotTop = 28, kPlotHeight = 110;
constexpr int kPlotWidth = kPanelWidth - 2 * kPlotLeft;
// At most one bar per two pixels; 2048-bin histograms would be a smear.
constexpr int kMaxBars = kPlotWidth / 2;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void panel(std::ostringstream& svg, const std::string& name, const TensorRange& r, int x0, int y0) {
  svg << "<g transform=\"translate(" << x0 << "," << y0 << ")\">\n";
  svg << "<title>" << xml_escape(name) << "</title>\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << kPanelWidth << "\" height=\"" << kPanelHeight
      << "\" fill=\"#fafafa\" stroke=\"#bbb\"/>\n";
  // Long names are cut for the panel; the <title> keeps the whole name.
  std::string shown = name.size() > 52 ? name.substr(0, 49) + "..." : name;
  svg << "<text x=\"" << kPlotLeft << "\" y=\"18\" font-family=\"monospace\" font-size=\"12\">" << xml_escape(shown)
      << "</text>\n";

  // The x axis spans the histogram and the range, whichever is wider (a
  // symmetric percentile histograms |x| but marks -t).
  double lo = r.low, hi = r.high;
  const bool has_hist = !r.hist.empty() && r.bin_edges.size() == r.hist.size() + 1;
  if (has_hist) {
    lo = std::min<double>(lo, r.bin_edges.front());
    hi = std::max<double>(hi, r.bin_edges.back());
  }
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double pad = (hi - lo) * 0.02;
  lo -= pad;
  hi += pad;
  auto to_x = [&](double v) { return kPlotLeft + (v - lo) / (hi - lo) * kPlotWidth; };
  const double base = kPlotTop + kPlotHeight;
  svg << "<line x1=\"" << kPlotLeft << "\" y1=\"" << base << "\" x2=\"" << kPlotLeft + kPlotWidth << "\" y2=\"" << base
      << "\" stroke=\"#888\"/>\n";

  if (has_hist) {
    // Merge adjacent bins into at most kMaxBars bars.
    const size_t n = r.hist.size();
    const size_t group = (n + kMaxBars - 1) / kMaxBars;
    std::vector<std::pair<size_t, double>> bars;  // (first bin, count)
    double peak = 0;
    for (size_t i = 0; i < n; i += group) {
      double c = 0;
      for (size_t k = i; k < std::min(n, i + group); ++k) c += r.hist[k];
      bars.emplace_back(i, c);
      peak = std::max(peak, c);
    }
    const double log_peak = std::log1p(peak);
    svg << "<g fill=\"#4a7ab5\">\n";
    for (const auto& [first, c] : bars) {
      if (c <= 0 || log_peak <= 0) continue;
      const size_t last = std::min(n, first + group);
      const double xa = to_x(r.bin_edges[first]), xb = to_x(r.bin_edges[last]);
      const double h = std::log1p(c) / log_peak * kPlotHeight;
      svg << "<rect x=\"" << px(xa) << "\" y=\"" << px(base - h) << "\" width=\"" << px(std::max(0.5, xb - xa))
          << "\" height=\"" << px(h) << "\"/>\n";
    }
    svg << "</g>\n";
  } else {
    svg << "<text x=\"" << kPlotLeft + kPlotWidth / 2 << "\" y=\"" << kPlotTop + kPlotHeight / 2
        << "\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#777\">no histogram (min/max "
           "calibration)</text>\n";
  }

  for (double v : {static_cast<double>(r.low), static_cast<double>(r.high)}) {
    const double x = to_x(v);
    svg << "<line x1=\"" << px(x) << "\" y1=\"" << kPlotTop - 4 << "\" x2=\"" << px(x) << "\" y2=\"" << base + 4
        << "\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\n";
  }
  svg << "<text x=\"" << kPlotLeft << "\" y=\"" << base + 20
      << "\" font-family=\"monospace\" font-size=\"11\" fill=\"#d62728\">[" << num(r.low) << ", " << num(r.high)
      << "]</text>\n";
  if (has_hist) {
    svg << "<text x=\"" << kPlotLeft + kPlotWidth << "\" y=\"" << base + 20
        << "\" text-anchor=\"end\" font-family=\"monospace\" font-size=\"10\" fill=\"#777\">" << r.hist.size()
        << " bins, " << num(r.bin_edges.front()) << " .. " << num(r.bin_edges.back()) << "</text>\n";
  }
  svg << "</g>\n";
}

}  // namespace

std::string histogram_svg(const std::map<std::string, TensorRange>& ranges, size_t max_tensors) {
  std::vector<const std::pair<const std::string, TensorRange>*> chosen;
  for (const auto& entry : ranges) chosen.push_back(&entry);
  // Widest range first; the map's order breaks ties by name (stable sort).
  std::stable_sort(chosen.begin(), chosen.end(), [](const auto* a, const auto* b) {
    return static_cast<double>(a->second.high) - a->second.low > static_cast<double>(b->second.high) - b->second.low;
  });
  if (chosen.size() > max_tensors) chosen.resize(max_tensors);

  const int count = static_cast<int>(chosen.size());
  const int columns = std::max(1, std::min(kColumns, count));
  const int rows = std::max(1, (count + columns - 1) / columns);
  const int width = kMargin + columns * (kPanelWidth + kMargin);
  const int height = 30 + rows * (kPanelHeight + kMargin);

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kMargin << "\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">Calibration: "
      << count << " of " << ranges.size() << " tensors, widest ranges first (bars: log(1 + count))</text>\n";
  if (count == 0) {
    svg << "<text x=\"" << kMargin << "\" y=\"50\" font-family=\"sans-serif\" font-size=\"12\">nothing to show</text>\n";
  }
  for (int i = 0; i < count; ++i) {
    const int x0 = kMargin + (i % columns) * (kPanelWidth + kMargin);
    const int y0 = 30 + (i / columns) * (kPanelHeight + kMargin);
    panel(svg, chosen[i]->first, chosen[i]->second, x0, y0);
  }
  svg << "</svg>\n";
  return svg.str();
}

Status write_histogram_svg(const std::string& path, const std::map<std::string, TensorRange>& ranges,
                           size_t max_tensors) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return fail("cannot open histogram file '" + path + "' for writing");
  file << histogram_svg(ranges, max_tensors);
  file.close();
  if (!file) return fail("cannot write histogram file '" + path + "'");
  return Status::ok();
}

}  // namespace loom::quant
