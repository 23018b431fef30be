"""Folded stacks (flamegraph.pl, speedscope) from a parsed trace_view.json:
each operator's self time under the Python call stack with_stack recorded.
"""
import collections
import json


def _self_times(events):
    """(event, self_us) for nested complete events of one thread."""
    events.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    out, open_ = [], []   # open_: [event, end, children_us]
    for e in events:
        start, dur = e["ts"], e.get("dur", 0)
        while open_ and open_[-1][1] <= start:
            done = open_.pop()
            out.append((done[0], max(done[0].get("dur", 0) - done[2], 0)))
        if open_:
            open_[-1][2] += dur
        open_.append([e, start + dur, 0.0])
    out.extend((d[0], max(d[0].get("dur", 0) - d[2], 0)) for d in open_)
    return out


def _device_times(events):
    """Kernel time per operator, through the ac2g flows' External id."""
    by_ext = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            ext = (e.get("args") or {}).get("External id")
            if ext is not None:
                by_ext[ext] += e.get("dur", 0)
    return by_ext


def fold(trace, device=False):
    """{"frame;...;operator": microseconds}, outermost frame first."""
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    threads = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            threads[(e.get("pid"), e.get("tid"))].append(e)
    kernels = _device_times(events) if device else None
    folded = collections.Counter()
    for evs in threads.values():
        for e, self_us in _self_times(evs):
            args = e.get("args") or {}
            weight = kernels.get(args.get("External id"), 0) if device else self_us
            stack = args.get("Call stack")
            if not stack or weight <= 0:
                continue
            frames = [f for f in stack.split(";") if f][::-1]
            folded[";".join(frames + [e["name"]])] += weight
    return folded


def write_folded(trace_path, path, device=False):
    """Writes `path`; returns the number of stacks written."""
    with open(trace_path) as f:
        trace = json.load(f)
    folded = fold(trace, device)
    with open(path, "w") as f:
        for stack, us in sorted(folded.items()):
            f.write("%s %d\n" % (stack, int(round(us))))
    return len(folded)
