#!/usr/bin/python3
"""Reference numbers for calibrator_test.cpp.

An independent numpy port of ONNX Runtime's calibrators
(onnxruntime/python/tools/quantization/calibrate.py: MinMaxCalibrater,
HistogramCollector with the entropy / percentile / distribution methods),
run on the fixed batches that calibrator_test.cpp rebuilds with batch_value().
Each observe() in Loom is one ORT collect() call (one batch per
collect_data), and MinMax's moving average is ORT's merge_range with
max_intermediate_outputs=1. scipy.stats.entropy is re-implemented here with
numpy (normalise both, sum p*log(p/q), float32 like scipy on float32 input).

Run: /usr/bin/python3 tests/unit/quantization/reference_calibration.py
(numpy 1.24 was used for the numbers pasted into the test.)
"""
import numpy as np


# ---------------------------------------------------------------- the data
def batch_value(batch, i):
    # Integer arithmetic and one IEEE division per term: bit-identical in C++.
    u = ((i * 7919 + batch * 131) % 1000) / 1000.0
    v = ((i * 104729 + batch * 17) % 997) / 997.0
    if batch == 0:
        return 2.0 * (u + v - 1.0) + 0.25
    if batch == 1:
        return 7.5 if i == 700 else 1.5 * (u + v - 1.0) - 0.5
    return 0.8 * (u + v - 1.0)


BATCH_SIZES = [2000, 1500, 1000]


def batches(relu=False):
    out = []
    for b, n in enumerate(BATCH_SIZES):
        a = np.array([batch_value(b, i) for i in range(n)], dtype=np.float64).astype(np.float32)
        if relu:
            a = np.maximum(a, np.float32(0))
        out.append(a)
    return out


# ---------------------------------------------------------------- MinMax
def minmax(data, symmetric=False, moving_average=False, averaging_constant=0.01):
    rng = None
    for arr in data:
        lo = np.array([np.min(arr)], dtype=np.float32)
        hi = np.array([np.max(arr)], dtype=np.float32)
        if symmetric:
            m = max(np.abs(lo), np.abs(hi))
            lo, hi = -m, m
        if rng is None:
            rng = (lo, hi)
        elif moving_average:
            rng = (rng[0] + averaging_constant * (lo - rng[0]), rng[1] + averaging_constant * (hi - rng[1]))
        else:
            rng = (min(rng[0], lo), max(rng[1], hi))
    return float(rng[0][0]), float(rng[1][0])


# ---------------------------------------------------------------- histograms
class Collector:
    def __init__(self, method, symmetric, num_bins):
        self.method, self.symmetric, self.num_bins = method, symmetric, num_bins
        self.h = None

    def collect(self, arr):
        if self.method == "percentile" and self.symmetric:
            self.collect_absolute_value(arr)
        else:
            self.collect_value(arr)

    def collect_absolute_value(self, data_arr_np):
        data_arr_np = data_arr_np.flatten()
        min_value = np.min(data_arr_np)
        max_value = np.max(data_arr_np)
        data_arr_np = np.absolute(data_arr_np)
        if self.h is None:
            hist, hist_edges = np.histogram(data_arr_np, bins=self.num_bins)
            self.h = (hist, hist_edges.astype(data_arr_np.dtype), min_value, max_value)
        else:
            old_hist, old_hist_edges, old_min, old_max = self.h
            temp_amax = np.max(data_arr_np)
            if temp_amax > old_hist_edges[-1]:
                width = old_hist_edges[1] - old_hist_edges[0]
                new_bin_edges = np.arange(old_hist_edges[-1] + width, temp_amax + width, width)
                old_hist_edges = np.hstack((old_hist_edges, new_bin_edges))
            hist, hist_edges = np.histogram(data_arr_np, bins=old_hist_edges)
            hist_edges = hist_edges.astype(data_arr_np.dtype)
            hist[: len(old_hist)] += old_hist
            self.h = (hist, hist_edges, min(old_min, min_value), max(old_max, max_value))

    def collect_value(self, data_arr):
        data_arr = data_arr.flatten()
        min_value = np.min(data_arr)
        max_value = np.max(data_arr)
        threshold = max(abs(min_value), abs(max_value))
        if self.h is None:
            hist, hist_edges = np.histogram(data_arr, self.num_bins, range=(-threshold, threshold))
            self.h = (hist, hist_edges, min_value, max_value, threshold)
            return
        old_hist, old_hist_edges, old_min, old_max, old_threshold = self.h
        if threshold <= old_threshold:
            new_hist, _ = np.histogram(data_arr, len(old_hist), range=(-old_threshold, old_threshold))
            self.h = (new_hist + old_hist, old_hist_edges, min(old_min, min_value), max(old_max, max_value),
                      old_threshold)
            return
        if old_threshold == 0:
            hist, hist_edges = np.histogram(data_arr, len(old_hist), range=(-threshold, threshold))
            hist += old_hist
        else:
            old_num_bins = len(old_hist)
            old_stride = 2 * old_threshold / old_num_bins
            half_increased_bins = int((threshold - old_threshold) // old_stride + 1)
            new_num_bins = old_num_bins + 2 * half_increased_bins
            threshold = half_increased_bins * old_stride + old_threshold
            hist, hist_edges = np.histogram(data_arr, new_num_bins, range=(-threshold, threshold))
            hist[half_increased_bins: new_num_bins - half_increased_bins] += old_hist
        self.h = (hist, hist_edges, min(old_min, min_value), max(old_max, max_value), threshold)


def percentile_range(h, percentile, symmetric):
    hist, hist_edges = h[0], h[1]
    cdf = np.cumsum(hist / hist.sum())
    if symmetric:
        idx_right = np.searchsorted(cdf, percentile / 100.0)
        lo, hi = -hist_edges[idx_right], hist_edges[idx_right]
    else:
        cut = (100.0 - percentile) / 200.0
        lo, hi = hist_edges[np.searchsorted(cdf, cut)], hist_edges[np.searchsorted(cdf, 1.0 - cut)]
    if lo < h[2]:
        lo = h[2]
    if hi > h[3]:
        hi = h[3]
    return float(lo), float(hi)


def smooth_distribution(p, eps=0.0001):
    is_zeros = (p == 0).astype(np.float32)
    is_nonzeros = (p != 0).astype(np.float32)
    n_zeros = is_zeros.sum()
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = eps * float(n_zeros) / float(n_nonzeros)
    hist = p.astype(np.float32)
    hist += eps * is_zeros + (-eps1) * is_nonzeros
    return hist


def kl_entropy(p, q):
    # scipy.stats.entropy(p, q) for strictly positive p, q.
    p = 1.0 * p / np.sum(p)
    q = 1.0 * q / np.sum(q)
    return np.sum(p * np.log(p / q))


def entropy_range(h, num_quantized_bins=128):
    hist, hist_edges = h[0], h[1]
    num_bins = hist.size
    zero_bin_index = num_bins // 2
    num_half_quantized_bin = num_quantized_bins // 2
    kl_divergence = np.zeros(zero_bin_index - num_half_quantized_bin + 1)
    thresholds = [(0, 0)] * kl_divergence.size
    for i in range(num_half_quantized_bin, zero_bin_index + 1):
        start_index = zero_bin_index - i
        end_index = min(zero_bin_index + i + 1, num_bins)
        thresholds[i - num_half_quantized_bin] = (float(hist_edges[start_index]), float(hist_edges[end_index]))
        sliced = hist[start_index:end_index].copy()
        p = sliced.copy()
        p[0] += sum(hist[:start_index])
        p[-1] += sum(hist[end_index:])
        nonzeros = (p != 0).astype(np.int64)
        quantized_bins = np.zeros(num_quantized_bins, dtype=np.int64)
        num_merged_bins = sliced.size // num_quantized_bins
        for index in range(num_quantized_bins):
            start = index * num_merged_bins
            quantized_bins[index] = sum(sliced[start:start + num_merged_bins])
        quantized_bins[-1] += sum(sliced[num_quantized_bins * num_merged_bins:])
        q = np.zeros(p.size, dtype=np.int64)
        for index in range(num_quantized_bins):
            start = index * num_merged_bins
            end = start + num_merged_bins
            norm = sum(nonzeros[start:end])
            if norm != 0:
                q[start:end] = float(quantized_bins[index]) / float(norm)
        p = smooth_distribution(p)
        q = smooth_distribution(q)
        kl_divergence[i - num_half_quantized_bin] = float("inf") if q is None else kl_entropy(p, q)
    lo, hi = thresholds[int(np.argmin(kl_divergence))]
    lo = max(lo, float(h[2]))
    hi = min(hi, float(h[3]))
    return lo, hi


def avg_std(h):
    hist, hist_edges = h[0], h[1]
    values = (hist_edges[:-1] + hist_edges[1:]) * 0.5
    avg = (hist * values).sum() / hist.sum()
    std = ((hist * values**2).sum() / hist.sum() - avg**2) ** 0.5
    return float(np.float32(avg)), float(np.float32(std))


def e4m3fn_values():
    out = []
    for b in range(256):
        s, e, m = b >> 7, (b >> 3) & 15, b & 7
        if e == 15 and m == 7:
            continue  # NaN
        v = (m / 8.0) * 2.0**-6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
        out.append(-v if s else v)
    return np.array(out, dtype=np.float32)


def collect(method, symmetric, num_bins, data):
    c = Collector(method, symmetric, num_bins)
    for arr in data:
        c.collect(arr)
    return c.h


def show(tag, h, lo, hi):
    hist, edges = h[0], h[1]
    print(f"{tag}: low={lo!r} high={hi!r} bins={hist.size} total={int(hist.sum())} "
          f"edge0={float(edges[0])!r} edgeN={float(edges[-1])!r} "
          f"weighted={int((np.arange(hist.size) * hist).sum())}")


def main():
    np.set_printoptions(precision=10)
    for name, data in (("act", batches()), ("relu", batches(relu=True))):
        print(f"== {name}")
        print("minmax", minmax(data))
        print("minmax symmetric", minmax(data, symmetric=True))
        print("minmax moving", minmax(data, moving_average=True))
        print("minmax moving symmetric", minmax(data, symmetric=True, moving_average=True))
        print("minmax moving first batch only", minmax(data[:1], moving_average=True))

        h = collect("entropy", False, 128, data[:1])
        show("entropy 1 batch", h, *entropy_range(h))
        h = collect("entropy", False, 128, data)
        show("entropy", h, *entropy_range(h))
        print("  entropy hist[0:4]", h[0][:4].tolist(), "hist[mid-2:mid+2]",
              h[0][h[0].size // 2 - 2: h[0].size // 2 + 2].tolist(), "threshold", float(h[4]))
        h2 = collect("entropy", False, 128, data[:2])
        print("  after 2 batches bins", h2[0].size, "threshold", float(h2[4]),
              "hist[25:29]", h2[0][25:29].tolist(),
              "total", int(h2[0].sum()), "weighted", int((np.arange(h2[0].size) * h2[0]).sum()))

        h = collect("entropy", False, 512, data)
        show("entropy 512 bins", h, *entropy_range(h))
        show("entropy 512 bins, 32 quantized", h, *entropy_range(h, 32))

        h = collect("percentile", False, 2048, data)
        show("percentile", h, *percentile_range(h, 99.999, False))
        show("percentile 99.0", h, *percentile_range(h, 99.0, False))
        h = collect("percentile", True, 2048, data)
        show("percentile symmetric", h, *percentile_range(h, 99.999, True))
        show("percentile symmetric 99.0", h, *percentile_range(h, 99.0, True))
        print("  abs hist[0:3]", h[0][:3].tolist(), "hist[-3:]", h[0][-3:].tolist())

        h = collect("distribution", False, 2048, data)
        avg, std = avg_std(h)
        std_f8 = float(np.std(e4m3fn_values()))
        half = 448.0 * float(np.float32(std) / np.float32(std_f8))
        print(f"distribution: avg={avg!r} std={std!r} bins={h[0].size} std_f8={std_f8!r} half_range={half!r}")
    zeros_first()
    # Mirrored data puts the outlier on the left (p[0] folding).
    h = collect("entropy", False, 512, [-a for a in batches()])
    show("negated act, entropy 512 bins", h, *entropy_range(h))


def zeros_first():
    # A first batch of zeros (threshold 0), then batch 0: ORT re-bins over
    # the new range with the old bin count and adds the old counts in place.
    h = collect("entropy", False, 128, [np.zeros(4, dtype=np.float32), batches()[0]])
    print("zeros first:", "bins", h[0].size, "hist[62:66]", h[0][62:66].tolist(), "total", int(h[0].sum()),
          "edgeN", float(h[1][-1]), "weighted", int((np.arange(h[0].size) * h[0]).sum()))


if __name__ == "__main__":
    main()
