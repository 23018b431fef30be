"""A result's trace_view.json, indexed for the summary tables of
prof.paddle: steps, operators nested per thread with the device time they
launched, ranges, device tasks and device API calls. Times in µs, as in
the trace (share/prof/doc/outputs.md says what each event is)."""
import bisect
import collections
import gzip
import json
import os

# Ranges prof's PyTorch hooks record themselves: not the user's.
HOOK_RANGES = ("Optimizer.", "enumerate(DataLoader)#", "DataLoader fetch")
TASK_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
CALL_CATS = ("cuda_runtime", "cuda_driver")
BACKWARD = "autograd::engine::evaluate_function"


class Span:
    __slots__ = ("name", "pid", "tid", "ts", "end", "ext", "corr", "parent", "gpu", "kind")

    def __init__(self, e):
        self.name = e.get("name", "")
        self.pid, self.tid = e.get("pid"), e.get("tid")
        self.ts = float(e["ts"])
        self.end = self.ts + float(e.get("dur", 0) or 0)
        args = e.get("args") or {}
        self.ext = args.get("External id")
        self.corr = args.get("correlation")     # a device task's launching call
        self.parent = None
        self.gpu = 0.0            # device time launched by it and its descendants
        self.kind = e.get("cat")

    @property
    def dur(self):
        return self.end - self.ts


def load(out_dir):
    po = os.path.join(out_dir, "PROFILER_OUTPUT")
    path = os.path.join(po, "trace_view.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with gzip.open(path + ".gz", "rt") as f:
        return json.load(f)


class TraceIndex:
    def __init__(self, trace):
        self.steps, self.ops, self.ranges, self.tasks, self.calls = [], [], [], [], []
        for e in trace.get("traceEvents", []):
            if e.get("ph") != "X" or "ts" not in e:
                continue
            cat, name = e.get("cat"), e.get("name", "")
            if cat == "cpu_op":
                self.ops.append(Span(e))
            elif cat == "user_annotation" and name.startswith("ProfilerStep#"):
                self.steps.append(Span(e))
            elif cat == "user_annotation":
                self.ranges.append(Span(e))
            elif cat in TASK_CATS:
                self.tasks.append(Span(e))
            elif cat in CALL_CATS:
                self.calls.append(Span(e))
        self.steps.sort(key=lambda s: s.ts)
        by_pid = collections.defaultdict(list)
        for s in self.steps:
            by_pid[s.pid].append(s)
        self._steps_of_pid = {p: ([s.ts for s in v], v) for p, v in by_pid.items()}
        self._nest_ops()
        self._attribute_tasks()
        self.top_ops = [o for o in self.ops if o.parent is None]

    def _nest_ops(self):
        """Each operator's parent: the innermost one still open on its thread
        at its start (operators nest exactly on a thread)."""
        by_thread = collections.defaultdict(list)
        for o in self.ops:
            by_thread[(o.pid, o.tid)].append(o)
        self.ops = []
        for ops in by_thread.values():
            # same start: the longer is the parent; same span: the earlier
            # External id (ids follow the order operators began)
            ops.sort(key=lambda o: (o.ts, -o.end, o.ext if isinstance(o.ext, int) else 0))
            stack = []
            for o in ops:
                while stack and stack[-1].end <= o.ts and stack[-1].end < o.end:
                    stack.pop()
                o.parent = stack[-1] if stack else None
                stack.append(o)
            self.ops.extend(ops)

    def _attribute_tasks(self):
        """Device time to the operator whose call launched it, then up to its
        ancestors (children come after their parents in self.ops)."""
        by_ext = collections.defaultdict(float)
        for t in self.tasks:
            if t.ext is not None:
                by_ext[t.ext] += t.dur
        for o in self.ops:
            o.gpu = by_ext.get(o.ext, 0.0) if o.ext is not None else 0.0
        for o in reversed(self.ops):
            if o.parent is not None:
                o.parent.gpu += o.gpu
        self.task_ops = {o.ext: o for o in self.ops if o.ext is not None}
        self.call_of = {c.corr: c for c in self.calls if c.corr is not None}

    def step_of(self, span):
        """The recorded step of span's process that holds its start, or None."""
        starts, steps = self._steps_of_pid.get(span.pid, ((), ()))
        i = bisect.bisect_right(starts, span.ts) - 1
        if i >= 0 and span.ts < steps[i].end:
            return steps[i]
        return None

    def user_ranges(self):
        return [r for r in self.ranges if not r.name.startswith(HOOK_RANGES)]


def union(intervals):
    """The length covered by (start, end) pairs."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total

