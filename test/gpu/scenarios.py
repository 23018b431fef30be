#!/usr/bin/env python3
"""prof on a real GPU with torch 2.x: the modes of torch2.py under `prof run`,
each checked ([ok]/[FAIL] lines) and described (what a person needs to
read a failure without the machine: counts by category, names, threads,
the agent's CUDA log lines, the step table).

  test/gpu/scenarios.py [--prof build/bin/prof] [--python python3]
                        [--out DIR] [--only loop,compile,graphs,userprof,streams,amp,
                        inscript,saved,nvtx]   (saved: the loop with PROF_OPS_KINETO_SAVE=1;
                        nvtx: the loop without --record-shapes, so its
                        operators come through torch's NVTX observer, the
                        default where no details are asked, as in compile,
                        graphs, userprof and amp)

Exit status 1 when a check failed. Each scenario has its own time limit;
one that runs out is a failure, and the others still run.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_overhead import csv_rows  # noqa: E402  (one reader of the outputs' CSVs)
SCRIPT = os.path.join(HERE, "torch2.py")
SRC = os.path.dirname(os.path.dirname(HERE))


class Checks:
    def __init__(self):
        self.failed = []

    def check(self, ok, what, detail=""):
        print("  [%s] %s%s" % ("ok" if ok else "FAIL", what, (": " + str(detail)) if detail != "" else ""),
              flush=True)
        if not ok:
            self.failed.append(what)
        return ok


def run(cmd, timeout, env=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
    result = None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
    return rc, out, err, result, time.time() - t0


def run_dir_of(stderr, out):
    for line in stderr.splitlines():
        if line.startswith("prof: recording into "):
            return line[len("prof: recording into "):].strip()
    dirs = sorted(glob.glob(os.path.join(out, "*_prof")), key=os.path.getmtime)
    return dirs[-1] if dirs else None


def window_result(out):
    """The first window's result under `out` (a plain python's prof.profile)."""
    found = []
    for d in glob.glob(os.path.join(out, "*_prof")):
        try:
            with open(os.path.join(d, "profiler_info.json")) as f:
                found.append((json.load(f)["window"]["window"], d))
        except (OSError, KeyError, ValueError):
            continue
    return min(found)[1] if found else None


def logs(d):
    text = {}
    for p in sorted(glob.glob(os.path.join(d, "logs", "*.log"))):
        with open(p, errors="replace") as f:
            text[os.path.basename(p)] = f.read()
    return text


def describe(d, ev):
    """Everything a reader needs later, printed."""
    by = collections.Counter((e.get("cat"), e.get("ph")) for e in ev)
    print("  events by (cat, ph): %s" % sorted(by.items(), key=lambda kv: -kv[1])[:25])
    for cat in ("kernel", "cuda_runtime", "cuda_driver", "gpu_memcpy", "gpu_memset",
                "user_annotation", "cpu_op"):
        names = collections.Counter(e.get("name") for e in ev if e.get("cat") == cat
                                    and e.get("ph") == "X")
        print("  %s top: %s" % (cat, [(n[:90], c) for n, c in names.most_common(8)]))
    other = collections.Counter(e.get("cat") for e in ev if e.get("ph") == "X") - collections.Counter()
    print("  X categories: %s" % dict(other))
    procs = {e["pid"]: e["args"].get("name") for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"].get("name") for e in ev
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    print("  processes: %s" % procs)
    print("  threads: %s" % dict(list(threads.items())[:30]))
    for name, text in logs(d).items():
        keep = [ln for ln in text.splitlines()
                if any(k in ln for k in ("cuda", "nvml", "CUPTI", "python hooks", "error",
                                         "fail", "device", "stepped", "nvtx", "NVTX"))]
        print("  log %s (%d lines):" % (name, len(text.splitlines())))
        for ln in keep[:40]:
            print("      " + ln[:300])
    for name in ("step_trace_time.csv",):
        rows = csv_rows(d, name)
        print("  %s: %d rows; first: %s" % (name, len(rows), rows[:3]))
    with open(os.path.join(d, "profiler_info.json")) as f:
        print("  end_info: %s" % json.load(f).get("end_info"))
    for name in ("kernel_details.csv", "op_statistic.csv", "api_statistic.csv",
                 "operator_details.csv", "device_usage.csv", "memory_record.csv"):
        rows = csv_rows(d, name)
        print("  %s: %d rows; first: %s" % (name, len(rows), rows[:2]))


def inside(e, outer):
    return outer["ts"] <= e["ts"] and e["ts"] + e.get("dur", 0) <= outer["ts"] + outer.get("dur", 0)


def driver_under_runtime(ev):
    """How many driver records lie inside a runtime record of their thread:
    the DRIVER kind duplicating the runtime's own calls."""
    rt = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "cuda_runtime" and e.get("ph") == "X":
            rt[(e["pid"], e["tid"])].append(e)
    for v in rt.values():
        v.sort(key=lambda e: e["ts"])
    nested = total = 0
    names = collections.Counter()
    import bisect
    for e in ev:
        if e.get("cat") != "cuda_driver" or e.get("ph") != "X":
            continue
        total += 1
        v = rt.get((e["pid"], e["tid"]), [])
        i = bisect.bisect_right([x["ts"] for x in v], e["ts"]) - 1 if v else -1
        if i >= 0 and inside(e, v[i]):
            nested += 1
            names[e["name"]] += 1
    return nested, total, names.most_common(6)


def common_checks(c, d, ev, steps, main_pid=None):
    lg = logs(d)
    alltext = "\n".join(lg.values())
    c.check("cuda: tracing with CUPTI" in alltext, "CUDA backend started")
    kernels = [e for e in ev if e.get("cat") == "kernel" and e.get("ph") == "X"]
    c.check(len(kernels) >= steps, "kernels", len(kernels))
    c.check(all(k.get("name") and k["name"] != "Kernel" for k in kernels), "kernels named")
    starts = {e["id"] for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    ends = {e["id"] for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f"}
    print("  [info] ac2g pairs: %d, kernels %d" % (len(starts & ends), len(kernels)))
    # a graph launch's kernels share its correlation id: count kernels, not flows
    launches = {e["args"].get("correlation") for e in ev
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"}
    joined = sum(1 for k in kernels if k.get("args", {}).get("correlation") in launches)
    c.check(joined >= 0.9 * len(kernels), "kernels joined to their launch (correlation)",
            "%d of %d" % (joined, len(kernels)))
    rows = csv_rows(d, "step_trace_time.csv")
    c.check(len(rows) >= steps, "step_trace_time rows", len(rows))
    comp = [float(r.get("Computing") or 0) for r in rows]
    c.check(all(x > 0 for x in comp), "every step has Computing time (tracing lasts)",
            [round(x) for x in comp])
    unknown = sum(1 for e in ev if e.get("cat") == "cpu_op" and e.get("ph") == "X"
                  and e.get("tid", 0) >= 1000000000)
    c.check(unknown == 0, "operators all on OS threads (none on 'torch thread N')", unknown)
    nested, total, names = driver_under_runtime(ev)
    print("  [info] driver records inside a runtime record of their thread: %d of %d %s" % (
        nested, total, names))
    # threads: runtime API records on the thread that runs Python (cpu_op's)
    rt_tids = collections.Counter((e["pid"], e["tid"]) for e in ev
                                  if e.get("cat") == "cuda_runtime" and e.get("ph") == "X")
    op_tids = collections.Counter((e["pid"], e["tid"]) for e in ev
                                  if e.get("cat") == "cpu_op" and e.get("ph") == "X")
    nv_tids = collections.Counter((e["pid"], e["tid"]) for e in ev
                                  if e.get("cat") == "user_annotation" and e.get("ph") == "X")
    print("  [info] runtime tids %s; cpu_op tids %s; annotation tids %s" % (
        rt_tids.most_common(4), op_tids.most_common(4), nv_tids.most_common(4)))
    # torch's autograd and pin-memory threads make CUDA calls and may
    # record nothing else: the device stream names them
    thread_names = {(e["pid"], e["tid"]): e.get("args", {}).get("name", "") for e in ev
                    if e.get("ph") == "M" and e.get("name") == "thread_name"}
    bare = [k for k in rt_tids if not thread_names.get(k, "").endswith(")")]
    c.check(not bare, "threads with CUDA calls named",
            [(k, thread_names.get(k)) for k in bare][:4])
    return kernels


def ops_with_device_time(c, d):
    rows = csv_rows(d, "operator_details.csv")
    dev = [r for r in rows if float(r.get("Device Total Duration(us)") or 0) > 0]
    c.check(len(dev) > 0, "operators with device time (operator_details.csv)",
            "%d of %d" % (len(dev), len(rows)))


def ops_through_nvtx(c, d, name):
    """No details asked: the operators came through torch's NVTX observer
    (the default), not a flush of torch's profiler, and nothing was said."""
    text = "\n".join(logs(d).values())
    came = [ln for ln in text.splitlines() if "operators from torch's NVTX ranges" in ln]
    c.check(bool(came) and "after torch's stop took" not in text,
            "%s: operators through torch's NVTX ranges, no flush (the default)" % name,
            came[:2] or [ln for ln in text.splitlines() if "operators: " in ln][:3])
    said = [ln for ln in text.splitlines() if "notice:" in ln and "NVTX" in ln]
    c.check(not said, "%s: no NVTX notice" % name, said[:2])


def scenario_loop(c, d, ev, res):
    steps = res["steps"] if res else 20
    common_checks(c, d, ev, steps)
    cats = collections.Counter(e.get("cat") for e in ev if e.get("ph") == "X")
    copies = collections.Counter(e["name"] for e in ev if e.get("cat") == "gpu_memcpy")
    print("  [info] copies: %s" % copies.most_common(6))
    c.check(any("HtoD" in n for n in copies), "HtoD copies")
    c.check(any("DtoD" in n for n in copies), "DtoD copies")
    c.check(cats["gpu_memset"] >= (res or {}).get("memsets", 1), "memsets",
            "%d (script did %s)" % (cats["gpu_memset"], (res or {}).get("memsets")))
    syncs = [e for e in ev if "ynchron" in e.get("name", "") or e.get("cat") in ("cuda_sync",)]
    c.check(len(syncs) >= steps, "synchronisation records", collections.Counter(
        (e.get("cat"), e["name"]) for e in syncs).most_common(4))
    names = collections.Counter(e["name"] for e in ev if e.get("cat") == "user_annotation")
    for r in ("train_step", "forward", "backward"):
        c.check(names[r] >= steps, "NVTX %s" % r, names[r])
    ops_with_device_time(c, d)
    usage = [r for r in csv_rows(d, "device_usage.csv") if r.get("Device Type") == "CUDA"]
    c.check(len(usage) >= 2, "NVML samples", len(usage))
    procs = [e for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"]
    c.check(len(procs) >= 3, "main process and 2 DataLoader workers in the trace", len(procs))
    apis = {r["API Name"] for r in csv_rows(d, "api_statistic.csv")}
    c.check(bool(apis) and "cudaGetDevice" not in apis, "api_statistic without noise",
            sorted(apis)[:12])


def scenario_compile(c, d, ev, res):
    steps = res["steps"] if res else 10
    kernels = common_checks(c, d, ev, steps)
    triton = collections.Counter(k["name"] for k in kernels if k["name"].startswith("triton"))
    c.check(len(triton) > 0, "Triton kernels named", triton.most_common(4))
    ops_with_device_time(c, d)
    ops_through_nvtx(c, d, "compile")


def scenario_graphs(c, d, ev, res):
    steps = res["steps"] if res else 10
    kernels = common_checks(c, d, ev, steps)
    launches = collections.Counter(e["name"] for e in ev
                                   if e.get("cat") in ("cuda_runtime", "cuda_driver")
                                   and "raph" in e.get("name", ""))
    c.check(bool(launches), "graph launches recorded", launches.most_common(4))
    per = collections.Counter(k.get("args", {}).get("graph id") for k in kernels)
    print("  [info] kernels by graph id: %s" % per.most_common(4))
    ops_through_nvtx(c, d, "graphs")


def scenario_userprof(c, d, ev, res):
    print("  [info] the script's own torch.profiler saw %s kernels (prof holds CUPTI: 0 expected)"
          % (res or {}).get("torch_kernels"))
    c.check(res is not None and res.get("torch_cpu_ops", 0) > 0,
            "the script's own torch.profiler saw operators", (res or {}).get("torch_cpu_ops"))
    text = "\n".join(logs(d).values())
    c.check("prof steps aside while it runs" in text, "operators stepped aside (agent log)")
    c.check("prof collects operators again" in text, "and resumed after it (agent log)")
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    c.check(len(ops) > 0, "prof's operators of the loop after the script's profiler", len(ops))
    c.check("notice: the program's own profiler" in text, "prof says the script's profiler gets "
            "no CUDA activity (agent log)")
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    c.check(len(kernels) > 0, "prof's kernels before the script's profiler", len(kernels))
    steps = csv_rows(d, "step_trace_time.csv")
    c.check(len(steps) >= 2 * (res or {}).get("steps", 1), "steps of both loops recorded",
            len(steps))
    ops_through_nvtx(c, d, "userprof")


def event_syncs(c, ev, steps):
    """Kineto's wait_on_* args on event syncs: each names a cudaEventRecord
    of the trace, and the stream waits wait for the copy stream."""
    # torch 2.11 records with cudaEventRecordWithFlags
    records = {e["args"].get("correlation") for e in ev
               if e.get("cat") in ("cuda_runtime", "cuda_driver")
               and e.get("name", "").startswith(("cudaEventRecord", "cuEventRecord"))}
    copy_streams = {e["args"].get("stream") for e in ev
                    if e.get("cat") == "gpu_memcpy" and "HtoD" in e.get("name", "")}
    for kind in ("Stream Wait Event", "Event Sync"):
        syncs = [e for e in ev if e.get("cat") == "cuda_sync" and e.get("name") == kind]
        known = [e for e in syncs if e["args"].get("wait_on_cuda_event_record_corr_id", -1) >= 0]
        print("  [info] %s: %d, first args %s" % (kind, len(syncs), [e["args"] for e in syncs[:2]]))
        c.check(len(known) >= steps, "%s with the record it waited for" % kind,
                "%d of %d" % (len(known), len(syncs)))
        c.check(all(e["args"]["wait_on_cuda_event_record_corr_id"] in records for e in known),
                "%s: wait_on_cuda_event_record_corr_id names a cudaEventRecord" % kind)
        if kind == "Stream Wait Event":
            on = collections.Counter(e["args"].get("wait_on_stream") for e in known)
            c.check(bool(set(on) & copy_streams), "stream waits wait for the copy stream",
                    "%s vs copies on %s" % (on.most_common(3), copy_streams))


def scenario_streams(c, d, ev, res):
    steps = res["steps"] if res else 20
    common_checks(c, d, ev, steps)
    event_syncs(c, ev, steps)
    mem = csv_rows(d, "memory_record.csv")
    pta = [r for r in mem if r.get("Component") == "PTA"]
    c.check(len(pta) > 0, "profile_memory: memory_record.csv PTA rows",
            "%d; first %s" % (len(pta), pta[:1]))
    opmem = csv_rows(d, "operator_memory.csv")
    c.check(len(opmem) > 0, "profile_memory: operator_memory.csv rows",
            "%d; first %s" % (len(opmem), opmem[:1]))
    modules = collections.Counter(e["name"] for e in ev if e.get("ph") == "X"
                                  and e.get("name", "").startswith("nn.Module: "))
    c.check(sum(modules.values()) >= steps, "with_modules: nn.Module ranges",
            modules.most_common(4))
    flops = [r for r in csv_rows(d, "operator_details.csv")
             if r.get("Name") in ("aten::addmm", "aten::mm") and float(r.get("FLOPs") or 0) > 0]
    c.check(len(flops) >= steps, "with_flops: FLOPs of the matmuls", flops[:1])
    report = os.path.join(d, "PROFILER_OUTPUT", "report.html")
    with open(report, errors="replace") as f:
        html = f.read()
    c.check("<svg" in html, "report.html with charts", len(html))
    annotations = [e for e in ev if e.get("cat") == "gpu_user_annotation"]
    print("  [info] gpu_user_annotation: %d" % len(annotations))


def scenario_amp(c, d, ev, res):
    """GradScaler skipped its first updates: every iteration is a step."""
    steps = res["steps"] if res else 12
    skipped = (res or {}).get("skipped", 0)
    c.check(skipped > 0, "the scaler skipped updates (init_scale overflows)", skipped)
    common_checks(c, d, ev, steps)
    profsteps = [e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith(
        "ProfilerStep#")]
    c.check(len(profsteps) == steps, "one step per iteration, skipped updates included",
            "%d steps for %d iterations" % (len(profsteps), steps))
    said = "GradScaler skipped the update of %d of them" % skipped
    c.check(said in "\n".join(logs(d).values()), "the agent log counts the skipped updates",
            said)
    ops_through_nvtx(c, d, "amp")


def scenario_ddp(c, d, ev, res):
    """DDP over NCCL under torchrun, one rank: the rank's process records,
    torchrun's does not; NCCL's collectives among its operators."""
    steps = res["steps"] if res else 20
    common_checks(c, d, ev, steps)
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    rank = [p for p, n in names.items() if "torch2.py ddp" in n and "distributed.run" not in n]
    launcher = [p for p, n in names.items() if "torch.distributed.run" in n]
    c.check(len(rank) == 1, "ddp: the rank's process in the trace", names)
    ops = collections.Counter(e["name"] for e in ev if e.get("cat") == "cpu_op"
                              and e.get("ph") == "X" and e.get("pid") in rank)
    c.check(ops["c10d::allreduce_"] >= steps, "ddp: c10d::allreduce_ among the operators",
            ops["c10d::allreduce_"])
    c.check(not [e for e in ev if e.get("cat") == "cpu_op" and e.get("pid") in launcher],
            "ddp: torchrun's own process records no operators", launcher)
    with open(os.path.join(d, "PROFILER_OUTPUT", "trace_view.json")) as f:
        dist = json.load(f).get("distributedInfo")
    c.check(dist == {"rank": 0}, "ddp: distributedInfo", dist)
    nccl = collections.Counter(e["name"].split("(")[0] for e in ev
                               if e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower())
    print("  [info] ddp: NCCL %s, its kernels (one rank: maybe none) %s" % (
        (res or {}).get("nccl"), nccl.most_common(4)))
    comm = os.path.join(d, "PROFILER_OUTPUT", "communication.json")
    if os.path.exists(comm):
        with open(comm) as f:
            steps_seen = json.load(f)
        print("  [info] ddp: communication.json steps %d, first %s" % (
            len(steps_seen), str(next(iter(steps_seen.values()), None))[:300]))
    ops_through_nvtx(c, d, "ddp")


def scenario_inscript(c, d, ev, res):
    """A window result of prof.profile in a plain python (no prof run)."""
    c.check(res is not None and res.get("steps", 0) >= 5, "the script ran", res)
    kernels = [e for e in ev if e.get("cat") == "kernel" and e.get("ph") == "X"]
    c.check(len(kernels) >= 3, "CUDA attached after its init: kernels in the window",
            len(kernels))
    rows = csv_rows(d, "step_trace_time.csv")
    c.check(len(rows) == 3, "the window's 3 active steps", [r.get("Step") for r in rows])
    ops_with_device_time(c, d)


def scenario_saved(c, d, ev, res):
    """The loop with torch writing each operator flush (PROF_OPS_KINETO_SAVE):
    what the loop has, operators included, and the flushes converted."""
    scenario_loop(c, d, ev, res)
    said = [ln for txt in logs(d).values() for ln in txt.splitlines() if "written by torch" in ln]
    c.check(bool(said), "saved: flushes written by torch (agent log)", said[:2])
    left = glob.glob(os.path.join(d, "raw", "*", "kineto-*"))
    c.check(not left, "saved: torch's flush files all converted by the parse", left[:3])
    ops = collections.Counter(e["name"] for e in ev if e.get("cat") == "cpu_op"
                              and e.get("ph") == "X")
    bwd = sum(n for k, n in ops.items() if k.startswith("autograd::engine::evaluate_function"))
    steps = res["steps"] if res else 20
    c.check(bwd >= steps, "saved: backward nodes among the operators", bwd)
    shaped = [r for r in csv_rows(d, "operator_details.csv") if r.get("Input Shapes")]
    c.check(bool(shaped), "saved: input shapes from torch's JSON (--record-shapes)",
            [(r["Name"], r["Input Shapes"]) for r in shaped[:3]])
    print("  [info] saved: operators %d, most common %s" % (sum(ops.values()),
                                                           ops.most_common(5)))


def scenario_nvtx(c, d, ev, res):
    """The loop without --record-shapes: operators through torch's NVTX
    observer (the default): what the loop has, operators joined to their
    kernels included, and no flush on the training thread."""
    scenario_loop(c, d, ev, res)
    text = "\n".join(logs(d).values())
    c.check("through torch's NVTX ranges" in text, "nvtx: operators through NVTX (agent log)")
    ops_through_nvtx(c, d, "nvtx")
    came = [ln for ln in text.splitlines() if "operators from torch's NVTX ranges" in ln]
    # taken at the NVTX call (backend_nvtx.c's hook in front of the real
    # CUPTI), none left to CUPTI
    at_call = [int(m.group(1)) for ln in came
               for m in [re.search(r"\((\d+) at the NVTX call", ln)] if m]
    c.check(sum(at_call) > 0, "nvtx: operators taken at the NVTX call (the hook)", came[:2])
    hooked = [ln for ln in text.splitlines() if "go through CUPTI" in ln]
    c.check(not hooked, "nvtx: every NVTX instance hooked", hooked[:2])
    flushes = [e for e in ev if e.get("name") == "prof::operators flush"]
    c.check(not flushes, "nvtx: no operator flush on the training thread", len(flushes))
    leaked = [e["name"] for e in ev if e.get("cat") == "user_annotation"
              and "op_id = " in e.get("name", "")]
    c.check(not leaked, "nvtx: no operator range left as an NVTX range", leaked[:3])
    ops = [e for e in ev if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    names = collections.Counter(e["name"] for e in ops)
    steps = res["steps"] if res else 30
    bwd = [e for e in ops if e["name"].startswith("autograd::engine::evaluate_function")]
    c.check(len(bwd) >= steps, "nvtx: backward nodes among the operators", len(bwd))
    # AccumulateGrad has no forward op (no sequence number), in Kineto too
    bwd = [e for e in bwd if not e["name"].endswith("AccumulateGrad")]
    fwd = [e for e in bwd if e.get("args", {}).get("Fwd thread id")]
    c.check(len(fwd) >= 0.9 * len(bwd), "nvtx: backward nodes know their forward thread",
            "%d of %d" % (len(fwd), len(bwd)))
    anns = collections.Counter(e["name"] for e in ev if e.get("cat") == "user_annotation")
    c.check(sum(n for k, n in anns.items() if k.startswith("Optimizer.step#")) >= steps,
            "nvtx: optimizer steps as annotations", anns.most_common(6))
    print("  [info] nvtx: operators %d, most common %s" % (len(ops), names.most_common(8)))


SCENARIOS = {
    "loop": (["loop", "--steps", "30"], ["--record-shapes"], 90, scenario_loop),
    "compile": (["compile", "--steps", "15"], [], 120, scenario_compile),
    "graphs": (["graphs", "--steps", "20"], [], 60, scenario_graphs),
    "userprof": (["userprof", "--steps", "10"], [], 90, scenario_userprof),
    "streams": (["streams", "--steps", "20"],
                ["--profile-memory", "--with-modules", "--with-flops"], 90, scenario_streams),
    "amp": (["amp", "--steps", "12"], [], 60, scenario_amp),
    "ddp": (["ddp", "--steps", "20"], [], 90, scenario_ddp),
    # flags None: a plain python, no prof run
    "inscript": (["inscript", "--steps", "8"], None, 90, scenario_inscript),
    # the loop, torch writing its flushes itself (shapes included)
    "saved": (["loop", "--steps", "30"], ["--record-shapes"], 90, scenario_saved),
    # the loop, operators through torch's NVTX observer (no details)
    "nvtx": (["loop", "--steps", "30"], [], 90, scenario_nvtx),
}
SCENARIO_ENV = {"saved": {"PROF_OPS_KINETO_SAVE": "1"}}
# between the python and the script: torchrun, one rank (the lease's one GPU)
SCENARIO_LAUNCH = {"ddp": ["-m", "torch.distributed.run", "--nproc_per_node", "1",
                           "--master_port", "29517"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prof", default=os.path.join(SRC, "build", "bin", "prof"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default="/tmp/prof-gpu-scenarios")
    ap.add_argument("--only", default=",".join(SCENARIOS))
    args = ap.parse_args()
    c = Checks()
    for name in args.only.split(","):
        wl, flags, limit, check = SCENARIOS[name]
        out = os.path.join(args.out, name)
        os.makedirs(out, exist_ok=True)
        wl = wl + (["--trace", os.path.join(out, "torch_trace.json")] if name == "userprof" else [])
        env = None
        if flags is None:
            pydir = os.path.join(os.path.dirname(os.path.realpath(args.prof)), "..", "share",
                                 "prof", "python")
            env = dict(os.environ, PYTHONPATH=os.path.normpath(pydir))
            cmd = [args.python, SCRIPT] + wl + ["--out", out]
        else:
            env = dict(os.environ, **SCENARIO_ENV.get(name, {}))
            cmd = [args.prof, "run", "-o", out] + flags + ["--", args.python] + \
                SCENARIO_LAUNCH.get(name, []) + [SCRIPT] + wl
        print("== %s: %s" % (name, " ".join(cmd)), flush=True)
        rc, so, se, res, secs = run(cmd, limit, env)
        print("  rc=%s in %.1f s; RESULT %s" % (rc, secs, res))
        print("  prof stderr tail:\n    " + "\n    ".join(se.splitlines()[-15:]))
        if rc != 0:
            print("  stdout tail:\n    " + "\n    ".join(so.splitlines()[-15:]))
        c.check(rc == 0, "%s: exit status 0" % name, rc)
        complaint = "CUPTI_ERROR" in se or "CUPTI initialization failed" in se
        if name == "userprof":
            # the script's own torch.profiler(CUDA) finds CUPTI taken, and torch
            # says so; prof's end note must explain it
            c.check(not complaint or 'torch\'s warning "CUPTI initialization failed"' in se,
                    "%s: torch's CUPTI warning explained by prof's note" % name)
        else:
            c.check(not complaint, "%s: no CUPTI complaint on the program's stderr" % name)
            # Kineto's log lines ("STAGE:... Completed Stage: Warm Up") from
            # prof's own operator collection are not the program's to see
            kineto = [ln for ln in se.splitlines() if ".cpp:" in ln and
                      ln.startswith(("STAGE:", "INFO:", "WARNING:", "ERROR:"))]
            c.check(not kineto, "%s: no Kineto log lines on the program's stderr" % name,
                    kineto[:2])
        d = run_dir_of(se, out) if flags is not None else window_result(out)
        if not d or not os.path.exists(os.path.join(d, "PROFILER_OUTPUT", "trace_view.json")):
            c.check(False, "%s: parsed run directory" % name, d)
            continue
        with open(os.path.join(d, "PROFILER_OUTPUT", "trace_view.json")) as f:
            t = json.load(f)
        ev = t.get("traceEvents", [])
        props = t.get("deviceProperties") or []
        print("  deviceProperties: %s" % str(props)[:300])
        # CUPTI's DEVICE record; a backend that starts after CUDA's set-up
        # (inscript) has it dumped, or the trace says 0 SMs
        c.check(props and all(p.get("numSms", 0) > 0 for p in props),
                "%s: device properties with their SM count" % name,
                [(p.get("id"), p.get("numSms")) for p in props])
        try:
            check(c, d, ev, res)
        except Exception as e:  # one scenario's surprise must not hide the others
            c.check(False, "%s: checks ran" % name, repr(e))
        try:
            describe(d, ev)
        except Exception as e:
            print("  describe failed: %r" % e)
    print("%s: %d check(s) failed %s" % ("FAIL" if c.failed else "PASS", len(c.failed), c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
