"""What the benchmark ran on, and how busy the machine was meanwhile.

Timings only compare within one run on one machine; these facts say which
machine, and whether other work shared its cores (which makes both runtimes
slower and noisier, though alternating rounds keeps the ratio fair).
"""
import os
import platform
import resource
import socket
import subprocess


def _first(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model():
    name = _first("/proc/cpuinfo", "model name") or platform.processor() or "unknown"
    family, model = _first("/proc/cpuinfo", "cpu family"), _first("/proc/cpuinfo", "model\t")
    flags = set((_first("/proc/cpuinfo", "flags") or "").split())
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]
    extra = f" (family {family}, model {model})" if family and model else ""
    return f"{name}{extra}; {' '.join(isa) or 'no AVX2'}"


def os_name():
    pretty = None
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{pretty or platform.system()}, kernel {platform.release()}"


def memory_gib():
    kb = _first("/proc/meminfo", "MemTotal")
    return round(int(kb.split()[0]) / 1024 / 1024, 1) if kb else None


def git_commit(repo):
    """HEAD of `repo`, with "+changes" when the working tree differs (read-only git)."""
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" +uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def describe(repo):
    return {
        "host": socket.gethostname(),
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
        "memory_gib": memory_gib(),
        "os": os_name(),
        "loom_commit": git_commit(repo),
    }


def _busy_and_total_seconds():
    """Busy and total CPU seconds of this machine's CPUs since boot (/proc/stat).

    Steal (time the hypervisor gave to other guests) is neither: it is left out."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]] + [0] * 8
    hz = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq = fields[:7]  # guest time is already inside user
    busy = user + nice + system + irq + softirq
    return busy / hz, (busy + idle + iowait) / hz


def _our_cpu_seconds():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class LoadMeter:
    """CPU time other processes used between start() and stop(): the machine's
    busy time minus this process's and its (waited-for) children's."""

    def start(self):
        self.busy0, self.total0 = _busy_and_total_seconds()
        self.ours0 = _our_cpu_seconds()
        self.load0 = os.getloadavg()[0]

    def stop(self):
        busy, total = _busy_and_total_seconds()
        ours = _our_cpu_seconds() - self.ours0
        capacity = total - self.total0
        others = max(0.0, (busy - self.busy0) - ours)
        return {
            "wall_s": round(capacity / (os.cpu_count() or 1), 1),
            "cpu_capacity_s": round(capacity, 1),
            "benchmark_cpu_s": round(ours, 1),
            "other_cpu_s": round(others, 1),
            "other_share": round(others / capacity, 3) if capacity else 0.0,
            "load_average_start": round(self.load0, 2),
            "load_average_end": round(os.getloadavg()[0], 2),
        }
