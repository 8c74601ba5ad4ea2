// The pieces of numpy.histogram / numpy.arange that ONNX Runtime's
// calibrators build on, reproduced bit for bit for float32 data (numpy 1.x
// promotion rules), so that bin counts match ORT's at every bin edge.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace loom::quant {

// numpy.histogram(a, bins=num_bins, range=(first, last)).edges for a float32
// `a`: numpy's linspace computed in double and rounded to float32, the last
// edge being `last` itself. An empty range (first == last) widens to
// [first - 0.5, last + 0.5] as numpy does. num_bins >= 1, first <= last.
std::vector<float> equal_width_edges(double first, double last, int num_bins);

// numpy.arange(start, stop, step) for float32 scalars (step > 0), which
// numpy 1.x returns as float64: the length from float32 arithmetic, the
// second element float32(start + step), the rest start + i * that delta.
std::vector<double> float32_arange(float start, float stop, float step);
// The length float32_arange() would return (0 for none), as a double so a
// caller can refuse an absurd one before allocating it.
double float32_arange_length(float start, float stop, float step);

// Adds to counts[i] (counts.size() == edges.size() - 1, edges ascending)
// the number of values x with edges[i] <= x < edges[i+1], the last bin also
// taking x == edges.back(); values outside [edges.front(), edges.back()]
// are not counted, as in numpy.histogram.
void count_into_bins(std::span<const double> edges, std::span<const float> values, std::vector<int64_t>& counts);

}  // namespace loom::quant
