"""paddle.profiler's summary() tables, from one prof result directory.

The views paddle prints, as far as prof's outputs hold their data: Device
(host_usage.csv and the device tasks), Overview (time per event type, each
type's intervals merged across threads), Model (per step: Dataloader,
Forward, Backward, Optimization, Others), Distribution
(step_trace_time.csv's split), Operator, Kernel, Memory Manipulation,
UserDefined, and Memory (`prof stats --view memory`) with profile_memory.
prof's steps, operators and ranges stand for paddle's: ProfileStep is
prof's ProfilerStep#N, Forward the top-level operators of a step outside
the optimizer and DataLoader ranges, Backward autograd's evaluate_function
operators, Optimization the Optimizer.step/zero_grad ranges, UserDefined
the ranges of prof_tx, RecordEvent and NVTX.
"""
import bisect
import collections
import csv
import os
import subprocess

from . import _runtime
from ._trace_index import BACKWARD, TraceIndex, load, union

UNIT_PER_US = {"s": 1e-6, "ms": 1e-3, "us": 1.0, "ns": 1e3}
DATALOADER, OPTIMIZER = "enumerate(DataLoader)#", "Optimizer."
MODEL_PARTS = ("Dataloader", "Forward", "Backward", "Optimization")


class _Stats:
    """Calls and per-call CPU and GPU times of one table row (µs)."""

    def __init__(self):
        self.calls = 0
        self.cpu, self.gpu = [], []

    def add(self, cpu, gpu):
        self.calls += 1
        self.cpu.append(cpu)
        self.gpu.append(gpu)

    def key(self, sort_key):
        vals = self.cpu if sort_key.startswith("CPU") else self.gpu
        what = sort_key[3:]
        if not vals:
            return 0.0
        if what == "Total":
            return -sum(vals)
        if what == "Avg":
            return -sum(vals) / len(vals)
        if what == "Max":
            return -max(vals)
        return min(vals)   # Min: smallest first, as paddle sorts it


class _RangesByThread:
    """Intervals of one kind per thread, for "is this moment inside one"."""

    def __init__(self, spans):
        by = collections.defaultdict(list)
        for s in spans:
            by[(s.pid, s.tid)].append((s.ts, s.end))
        self.by = {k: (sorted(v), [a for a, _ in sorted(v)]) for k, v in by.items()}

    def holds(self, pid, tid, t):
        iv, starts = self.by.get((pid, tid), ((), ()))
        i = bisect.bisect_right(starts, t) - 1
        return i >= 0 and t < iv[i][1]


class _Format:
    def __init__(self, unit):
        self.unit, self.f = unit, UNIT_PER_US[unit]

    def t(self, us):
        return "%.2f" % (us * self.f)

    def five(self, vals, base):
        """Per-call times as "Total / Avg / Max / Min / Ratio(%)"."""
        if not vals:
            return "- / - / - / - / -"
        total = sum(vals)
        return "%s / %s / %s / %s / %.2f" % (self.t(total), self.t(total / len(vals)),
                                             self.t(max(vals)), self.t(min(vals)),
                                             100.0 * total / base if base else 0.0)


def _table(title, unit, widths, header, rows, note=None):
    """Columns of at least `widths`; the first (names) is cut to its width,
    the others (numbers) widen to what they hold."""
    cells = [r for r in rows if isinstance(r, list)] + [header]
    widths = [widths[0]] + [max([w] + [len(str(r[i])) for r in cells])
                            for i, w in enumerate(widths) if i > 0]
    total = sum(widths) + 2 * (len(widths) - 1)
    rule = "  ".join("-" * w for w in widths)

    def line(cells):
        out = []
        for c, w in zip(cells, widths):
            c = str(c)
            out.append((c if len(c) <= w else c[:w - 3] + "...").ljust(w))
        return "  ".join(out).rstrip()

    lines = [title.center(total, "-")]
    if unit:
        lines.append("Time unit: %s" % unit)
    lines += [rule, line(header), rule]
    for r in rows:
        if isinstance(r, str):
            lines.append(r.center(total, "-"))   # a heading inside the table
        else:
            lines.append(rule if r is None else line(r))
    lines.append(rule)
    if note:
        lines.append(note)
    return "\n".join(lines)


class _Summary:
    def __init__(self, out, fmt):
        self.out, self.fmt = out, fmt
        self.ix = TraceIndex(load(out))
        ix = self.ix
        self.step_time = union((s.ts, s.end) for s in ix.steps)
        self.gpu_time = union((t.ts, t.end) for t in ix.tasks)
        self.dl = [r for r in ix.ranges if r.name.startswith(DATALOADER)]
        self.opt = [r for r in ix.ranges if r.name.startswith(OPTIMIZER)]
        in_dl, in_opt = _RangesByThread(self.dl), _RangesByThread(self.opt)
        self.part_of = {}
        for o in ix.top_ops:
            if o.name.startswith(BACKWARD):
                self.part_of[o] = "Backward"
            elif in_opt.holds(o.pid, o.tid, o.ts):
                self.part_of[o] = "Optimization"
            elif in_dl.holds(o.pid, o.tid, o.ts):
                self.part_of[o] = "Dataloader"
            else:
                self.part_of[o] = "Forward"

    def _top(self, op):
        while op.parent is not None:
            op = op.parent
        return op

    def _task_step_part(self, task):
        """The step and model part of a device task: its operator's, else
        the step of the API call that launched it (tasks lie on the
        device's own pid)."""
        op = self.ix.task_ops.get(task.ext) if task.ext is not None else None
        if op is None:
            call = self.ix.call_of.get(task.corr) if task.corr is not None else None
            return (self.ix.step_of(call) if call else None), None
        top = self._top(op)
        return self.ix.step_of(top), self.part_of.get(top)

    # -- the views ---------------------------------------------------------
    def device(self):
        rows, span = [], self._window_span()
        host = _host_usage(self.out, span)
        if host:
            rows.append(["CPU(Process)", "%.2f" % host[0]])
            rows.append(["CPU(System)", "%.2f" % host[1]])
        by_dev = collections.defaultdict(list)
        for t in self.ix.tasks:
            by_dev[t.pid].append((t.ts, t.end))
        length = span[1] - span[0] if span else 0
        for dev in sorted(by_dev, key=str):
            util = 100.0 * union(by_dev[dev]) / length if length > 0 else 0.0
            rows.append(["GPU%s" % dev, "%.2f" % util])
        if not rows:
            rows.append(["(no host samples or device tasks in this window)", ""])
        return _table("Device Summary", None, [30, 20], ["Device", "Utilization (%)"], rows,
                      "CPU(Process): the program's CPU time over all cores / elapsed time "
                      "(up to 100% per core); CPU(System): busy time of all CPUs; "
                      "GPU: device busy time / the window's elapsed time.")

    def _window_span(self):
        if not self.ix.steps:
            return None
        return min(s.ts for s in self.ix.steps), max(s.end for s in self.ix.steps)

    def overview(self):
        ix, f = self.ix, self.fmt
        base = self.step_time

        def row(name, spans, indent="  "):
            t = union((s.ts, s.end) for s in spans)
            return [indent + name, len(spans), f.t(t), "%.2f" % (100.0 * t / base if base else 0)]

        parts = {p: [o for o in ix.top_ops if self.part_of[o] == p] for p in MODEL_PARTS}
        rows = [row("ProfileStep", ix.steps, ""), row("CudaRuntime", ix.calls),
                row("UserDefined", ix.user_ranges()), row("Dataloader", self.dl),
                row("Forward", parts["Forward"]), row("Backward", parts["Backward"]),
                row("Optimization", self.opt), row("Operator", ix.ops)]
        rows.sort(key=lambda r: (r[0] != "ProfileStep", -float(r[2])))
        gpu = [("Kernel", [t for t in ix.tasks if t.kind == "kernel" and not _is_comm(t)]),
               ("Memcpy", [t for t in ix.tasks if t.kind == "gpu_memcpy"]),
               ("Memset", [t for t in ix.tasks if t.kind == "gpu_memset"]),
               ("Communication", [t for t in ix.tasks if _is_comm(t)])]
        rows += [None, ["", "Calls", "GPU Time", "Ratio (%)"], None]
        rows += [row(name, spans) for name, spans in gpu]
        return _table("Overview Summary", f.unit, [25, 25, 25, 25],
                      ["Event Type", "Calls", "CPU Time", "Ratio (%)"], rows,
                      "Events of one type are merged across threads before they are summed; "
                      "types overlap (Operator holds Forward), so the ratios add up to more "
                      "than 100.")

    def model(self):
        ix, f = self.ix, self.fmt
        cpu = {p: collections.defaultdict(list) for p in MODEL_PARTS}
        spans = {"Dataloader": self.dl, "Optimization": self.opt,
                 "Forward": [o for o in ix.top_ops if self.part_of[o] == "Forward"],
                 "Backward": [o for o in ix.top_ops if self.part_of[o] == "Backward"]}
        for part, ss in spans.items():
            for s in ss:
                st = ix.step_of(s)
                if st is not None:
                    cpu[part][st].append((s.ts, min(s.end, st.end)))
        gpu_all, gpu = collections.defaultdict(list), {p: collections.defaultdict(list)
                                                       for p in MODEL_PARTS}
        for t in ix.tasks:
            st, part = self._task_step_part(t)
            if st is None:
                continue
            gpu_all[st].append((t.ts, t.end))
            if part:
                gpu[part][st].append((t.ts, t.end))
        step_cpu = [s.dur for s in ix.steps]
        step_gpu = [union(gpu_all[s]) for s in ix.steps]
        base_cpu, base_gpu = sum(step_cpu), sum(step_gpu)
        rows = [["ProfileStep", len(ix.steps), f.five(step_cpu, base_cpu),
                 f.five(step_gpu, base_gpu)]]
        used_cpu = used_gpu = 0.0
        for part in MODEL_PARTS:
            c = [union(v) for v in cpu[part].values()]
            g = [union(v) for v in gpu[part].values()]
            used_cpu, used_gpu = used_cpu + sum(c), used_gpu + sum(g)
            calls = len(set(cpu[part]) | set(gpu[part]))
            rows.append(["  " + part, calls, f.five(c, base_cpu), f.five(g, base_gpu)])
        other_cpu, other_gpu = max(base_cpu - used_cpu, 0.0), max(base_gpu - used_gpu, 0.0)
        rows.append(["  Others", "-",
                     "%s / - / - / - / %.2f" % (f.t(other_cpu),
                                                100 * other_cpu / base_cpu if base_cpu else 0),
                     "%s / - / - / - / %.2f" % (f.t(other_gpu),
                                                100 * other_gpu / base_gpu if base_gpu else 0)])
        return _table("Model Summary", f.unit, [15, 6, 45, 45],
                      ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                       "GPU Total / Avg / Max / Min / Ratio(%)"], rows)

    def distribution(self):
        f = self.fmt
        sums = collections.defaultdict(float)
        devices = 0
        for r in _csv(self.out, "step_trace_time.csv"):
            if r.get("Device_id") in (None, "", "-1"):
                continue
            devices += 1
            for k in ("Computing", "Communication", "Overlapped", "Free"):
                sums[k] += float(r.get(k) or 0)
        if not devices:
            rows = [["(no device activity in this window: nothing to split)", "", ""]]
        else:
            base = self.step_time
            rows = [["ProfileStep", f.t(base), "100.00"]] + [
                ["  " + name, f.t(sums[k]), "%.2f" % (100.0 * sums[k] / base if base else 0)]
                for name, k in (("Communication", "Communication"),
                                ("Computation", "Computing"), ("Overlap", "Overlapped"),
                                ("Free", "Free"))]
        return _table("Distribution Summary", f.unit, [25, 25, 25],
                      ["Name", "Total Time", "Ratio (%)"], rows,
                      "From step_trace_time.csv, summed over the window's steps and devices.")

    def operators(self, sort_key, op_detail, thread_sep):
        ix, f = self.ix, self.fmt
        groups = collections.OrderedDict()
        if thread_sep:
            for o in ix.top_ops:
                groups.setdefault((o.pid, o.tid), []).append(o)
        else:
            groups[None] = ix.top_ops
        children = collections.defaultdict(list)
        for o in ix.ops:
            if o.parent is not None:
                children[o.parent].append(o)
        rows = []
        for key, tops in groups.items():
            label = "Thread: All threads merged" if key is None else \
                "Thread: %s (pid %s)" % (key[1], key[0])
            rows.append(label)
            for name, st in _sorted(_by_name(tops), sort_key):
                rows.append(self._op_row(name, st, ""))
                if op_detail:
                    rows += self._detail(tops, name, children, sort_key)
        return _table("Operator Summary", f.unit, [52, 6, 40, 40],
                      ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                       "GPU Total / Avg / Max / Min / Ratio(%)"], rows,
                      "Top-level operators; with op_detail, the operators each one called "
                      "and the device tasks launched under it.")

    def _op_row(self, name, st, indent):
        return [indent + name, st.calls, self.fmt.five(st.cpu, self.step_time),
                self.fmt.five(st.gpu, self.gpu_time)]

    def _detail(self, tops, name, children, sort_key):
        mine = [o for o in tops if o.name == name]
        kids = [c for o in mine for c in children[o]]
        rows = [self._op_row(n, st, "  ") for n, st in _sorted(_by_name(kids), sort_key)]
        under = set()
        stack = list(mine)
        while stack:
            o = stack.pop()
            if o.ext is not None:
                under.add(o.ext)
            stack.extend(children[o])
        tasks = collections.defaultdict(list)
        for t in self.ix.tasks:
            if t.ext in under:
                tasks[t.name].append(t.dur)
        for n, durs in sorted(tasks.items(), key=lambda kv: -sum(kv[1])):
            rows.append(["  " + n, len(durs), "- / - / - / - / -",
                         self.fmt.five(durs, self.gpu_time)])
        return rows

    def tasks(self, title, kinds, sort_key):
        f = self.fmt
        st = collections.defaultdict(_Stats)
        for t in self.ix.tasks:
            if t.kind in kinds:
                st[t.name].add(0.0, t.dur)
        key = sort_key if sort_key.startswith("GPU") else "GPUTotal"
        rows = [[n, s.calls, f.five(s.gpu, self.gpu_time)] for n, s in _sorted(st, key)]
        if not rows:
            rows = [["(none in this window)", "", ""]]
        return _table(title, f.unit, [90, 6, 40],
                      ["Name", "Calls", "GPU Total / Avg / Max / Min / Ratio(%)"], rows)

    def user_defined(self, sort_key):
        f = self.fmt
        launches = _LaunchesByThread(self.ix.calls, self.ix.tasks)
        st = collections.defaultdict(_Stats)
        for r in self.ix.user_ranges():
            st[r.name].add(r.dur, launches.gpu_inside(r))
        rows = [self._op_row(n, s, "") for n, s in _sorted(st, sort_key)]
        if not rows:
            rows = [["(no ranges of the program in this window)", "", "", ""]]
        return _table("UserDefined Summary", f.unit, [59, 6, 40, 40],
                      ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                       "GPU Total / Avg / Max / Min / Ratio(%)"], rows)


class _LaunchesByThread:
    """Device API calls per thread in start order, each with the device time
    of the tasks it launched, to sum what a range launched."""

    def __init__(self, calls, tasks):
        launched = collections.defaultdict(float)
        for t in tasks:
            if t.corr is not None:
                launched[t.corr] += t.dur
        by = collections.defaultdict(list)
        for c in sorted(calls, key=lambda c: c.ts):
            by[(c.pid, c.tid)].append((c.ts, launched.get(c.corr, 0.0)))
        self.by = {k: ([ts for ts, _ in v], [g for _, g in v]) for k, v in by.items()}

    def gpu_inside(self, r):
        starts, gpu = self.by.get((r.pid, r.tid), ((), ()))
        i, j = bisect.bisect_left(starts, r.ts), bisect.bisect_left(starts, r.end)
        return sum(gpu[i:j])


def _by_name(ops):
    st = collections.defaultdict(_Stats)
    for o in ops:
        st[o.name].add(o.dur, o.gpu)
    return st


def _sorted(stats, sort_key):
    return sorted(stats.items(), key=lambda kv: (kv[1].key(sort_key), kv[0]))


def _is_comm(t):
    return t.kind == "kernel" and t.name.lower().startswith(("nccl", "allreduce", "allgather",
                                                             "broadcast", "reducescatter",
                                                             "alltoall", "send", "recv"))


def _csv(out, name):
    try:
        with open(os.path.join(out, "PROFILER_OUTPUT", name), newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def _host_usage(out, span):
    """Mean (process CPU %, system CPU %) of host_usage.csv within span."""
    proc, system = [], []
    for r in _csv(out, "host_usage.csv"):
        try:
            t = float(r["Timestamp(us)"])
            if span and not span[0] <= t <= span[1]:
                continue
            proc.append(float(r["Process CPU User(%)"]) + float(r["Process CPU System(%)"]))
            system.append(float(r["System CPU(%)"]))
        except (KeyError, ValueError):
            continue
    if not proc:
        return None
    return sum(proc) / len(proc), sum(system) / len(system)


def _memory(out):
    r = subprocess.run([_runtime.PROF_EXE, "stats", "--view", "memory", out],
                       capture_output=True, text=True)
    return "Memory Summary".center(80, "-") + "\n" + (r.stdout or r.stderr).rstrip()


def summary_text(out, sort_key, op_detail=True, thread_sep=False, time_unit="ms",
                 memory=False):
    s = _Summary(out, _Format(time_unit))
    parts = [s.device(), s.overview(), s.model(), s.distribution(),
             s.operators(sort_key, op_detail, thread_sep),
             s.tasks("Kernel Summary", ("kernel",), sort_key),
             s.tasks("Memory Manipulation Summary", ("gpu_memcpy", "gpu_memset"), sort_key),
             s.user_defined(sort_key)]
    if memory:
        parts.append(_memory(out))
    return "\n\n".join(parts)
