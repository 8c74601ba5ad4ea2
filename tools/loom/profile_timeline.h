// `loom profile timeline`: one run of a Loom profile drawn as a
// self-contained SVG (no scripts, no external references), readable in a
// browser. One horizontal lane per (pid, tid) with events in the run's
// window, labelled with its thread_name; nested spans (run > executor >
// step) stack in rows inside a lane. Every span is one <rect class="span">
// carrying a <title> tooltip; nothing else in the picture is a <rect>.
#pragma once

#include <cstdint>
#include <string>

#include "profile_trace.h"

namespace loom::tools::profile {

struct TimelineStats {
  size_t spans = 0;
  size_t lanes = 0;
};

// The SVG for run `run` (which must exist in `trace`). The window is the
// run's events (args.run == run) plus any other complete event that overlaps
// them; times on the axis are ms since the session started.
std::string render_timeline_svg(const Trace& trace, int64_t run, TimelineStats* stats);

// Fill colour of a span: by category; kernel / partition steps and device
// events by op type, from a fixed palette through a stable (FNV-1a) hash.
std::string span_colour(const Span& s);

}  // namespace loom::tools::profile
