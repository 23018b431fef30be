#!/usr/bin/env python3
"""prof on a real GPU: overhead and content, side by side in one run.

Runs test/gpu/train.py three ways on the same machine, one after the other:
  bare            python3 train.py
  prof steps      prof run -o OUT --activities "" -- python3 train.py (steps only)
  prof devices    prof run -o OUT --activities DEVICE -- python3 train.py (steps, CUDA)
  prof operators  prof run -o OUT --activities CPU -- ... (steps, PyTorch operators)
  prof            prof run -o OUT -- python3 train.py (all of it)
                  (both: operators through torch's NVTX observer, no flushes)
  prof operators flushes, prof flushes: the two above with PROF_OPS_NVTX=0
                  (operators through torch's profiler, flushed every ten steps)
  prof operators saved, prof saved: the flushes with PROF_OPS_KINETO_SAVE=1
                  (torch 2.x writes each operator flush itself; the parse converts)
  prof nvtx cupti "prof" with torch's ranges left to CUPTI (PROF_NVTX_VIA_CUPTI=1)
  torch.profiler cpu  python3 train.py --torch-profiler TRACE --torch-cpu-only
  torch.profiler  python3 train.py --torch-profiler TRACE (CPU + CUDA activity)
and prints each one's median step time and its overhead over bare. Then it
checks what prof recorded, and exits 1 if anything is missing:
  - the CUDA backend started on a real CUPTI (agent log), no subscriber clash
  - kernels, with names (trace_view.json, kernel_details.csv)
  - launches joined to their kernels (ac2g flow pairs, cudaLaunchKernel)
  - host-to-device copies (gpu_memcpy)
  - the NVTX ranges train.py pushes (train_step, forward, backward)
  - the GPU's properties, and NVML samples (device_usage.csv)
Overhead figures are reported, not judged, unless --max-overhead is given.

  test/gpu/run_overhead.py [--prof build/bin/prof] [--python python3]
                           [--steps 200] [--model mlp] [--repeat 1] [--out DIR]
                           [--ablate | --lean]
"""
import argparse
import collections
import csv
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train.py")
SRC = os.path.dirname(os.path.dirname(HERE))


def default_prof():
    for cand in ("build/bin/prof", "build-cuda/bin/prof"):
        p = os.path.join(SRC, cand)
        if os.access(p, os.X_OK):
            return p
    return shutil.which("prof") or "prof"


# prof's variants: steps only; steps and device activity; steps and operators;
# all (the default: operators through torch's NVTX observer where it applies)
CPU = ["--activities", "CPU"]
FLUSHES = {"PROF_OPS_NVTX": "0"}   # operators through torch's profiler, flushed
PROF_VARIANTS = (("prof steps", ["--activities", ""], {}),
                 ("prof devices", ["--activities", "DEVICE"], {}),
                 ("prof operators", CPU, {}),
                 ("prof", [], {}),
                 # the way before NVTX: torch's profiler stopped, converted and
                 # restarted on the training thread every ten steps
                 ("prof operators flushes", CPU, FLUSHES),
                 ("prof flushes", [], FLUSHES),
                 # ... torch writing each flush itself, the parse converting it
                 # (PROF_OPS_KINETO_SAVE: experimental)
                 ("prof operators saved", CPU, dict(FLUSHES, PROF_OPS_KINETO_SAVE="1")),
                 ("prof saved", [], dict(FLUSHES, PROF_OPS_KINETO_SAVE="1")),
                 # torch's ranges left to CUPTI's MARKER records (the way before
                 # prof's NVTX hook: PROF_NVTX_VIA_CUPTI, a diagnostic)
                 ("prof nvtx cupti", [], {"PROF_NVTX_VIA_CUPTI": "1"}))
# --ablate: what each CUPTI kind prof traces costs (PROF_CUDA_SKIP_KINDS, a diagnostic)
DEV = ["--activities", "DEVICE"]
# the kinds Kineto does not trace by default (torch.profiler's CUDA activity)
NOT_KINETO = "SYNCHRONIZATION,MEMORY2,OVERHEAD,CUDA_EVENT,MARKER"
ABLATE = (("dev", DEV, {}),
          ("dev -DRIVER", DEV, {"PROF_CUDA_SKIP_KINDS": "DRIVER"}),
          ("dev -MARKER", DEV, {"PROF_CUDA_SKIP_KINDS": "MARKER"}),
          ("dev -CUDA_EVENT", DEV, {"PROF_CUDA_SKIP_KINDS": "CUDA_EVENT"}),
          ("dev -SYNC,MEM2,OVH", DEV,
           {"PROF_CUDA_SKIP_KINDS": "SYNCHRONIZATION,MEMORY2,OVERHEAD,CUDA_EVENT"}),
          ("dev kernels only", DEV, {"PROF_CUDA_SKIP_KINDS": "RUNTIME,DRIVER,MARKER,"
                                     "SYNCHRONIZATION,MEMORY2,OVERHEAD,MEMCPY,MEMCPY2,MEMSET,"
                                     "CUDA_EVENT"}))
# --lean: prof beside its variants with Kineto's kinds only, to compare like with like
LEAN = PROF_VARIANTS + (("prof dev kineto-kinds", DEV, {"PROF_CUDA_SKIP_KINDS": NOT_KINETO}),
                        ("prof kineto-kinds", [], {"PROF_CUDA_SKIP_KINDS": NOT_KINETO}))


def run_train(cmd, env=None):
    """Runs one variant; returns (RESULT dict, stderr). RESULT gains
    "job_ms": from train.py's first step to the command's exit: the steps,
    then the profiler's own end (torch.profiler's stop and export; prof's
    last operators and the run's end, without the parse: prof runs get
    --no-parse, their parse is timed apart)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    end = time.monotonic()
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    if proc.returncode != 0 or result is None:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit("run_overhead: %s failed (exit %d)" % (" ".join(cmd), proc.returncode))
    result["job_ms"] = (end - result.get("loop_start_mono", end)) * 1e3
    return result, proc.stderr


def parse_timed(prof, prof_out):
    """`prof parse` of a --no-parse run; (run directory, seconds)."""
    run_dir = sorted(glob.glob(os.path.join(prof_out, "*_prof")))[-1]
    t0 = time.monotonic()
    p = subprocess.run([prof, "parse", run_dir], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("run_overhead: prof parse %s failed:\n%s" % (run_dir, p.stderr))
    return run_dir, time.monotonic() - t0


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what, detail=""):
        print("  [%s] %s%s" % ("ok" if ok else "FAIL", what, (": " + str(detail)) if detail else ""))
        self.failed += not ok


def op_count(run_dir):
    return sum(int(r["Count"]) for r in csv_rows(run_dir, "op_statistic.csv"))


def check_saved(c, dirs):
    """PROF_OPS_KINETO_SAVE's operators against those prof converts itself,
    on the same script: about as many (each run's own), none left unparsed."""
    for saved, own in (("prof operators saved", "prof operators flushes"),
                       ("prof saved", "prof flushes")):
        if saved not in dirs or own not in dirs:
            continue
        a, b = op_count(dirs[saved]), op_count(dirs[own])
        c.check(b and abs(a - b) <= 0.05 * b, "%s: operators as many as %s's" % (saved, own),
                "%d and %d" % (a, b))
        left = glob.glob(os.path.join(dirs[saved], "raw", "*", "kineto-*"))
        c.check(not left and glob.glob(os.path.join(dirs[saved], "raw", "*", "fwk*.raw")),
                "%s: torch's flush files converted by the parse" % saved,
                "%d left" % len(left) if left else "")


def check_nvtx(c, dirs):
    """The operators of torch's NVTX observer (the default) against the
    flush way's (PROF_OPS_NVTX=0), same script: about as many (the observer
    sees the same RecordFunctions), the runs made no flush, and with device
    activity they have device time."""
    for nvtx, own in (("prof operators", "prof operators flushes"), ("prof", "prof flushes"),
                      ("prof nvtx cupti", "prof flushes")):
        if nvtx not in dirs or own not in dirs:
            continue
        a, b = op_count(dirs[nvtx]), op_count(dirs[own])
        c.check(b and abs(a - b) <= 0.05 * b, "%s: operators as many as %s's" % (nvtx, own),
                "%d and %d" % (a, b))
        text = ""
        for p in glob.glob(os.path.join(dirs[nvtx], "logs", "agent-*.log")):
            with open(p, errors="replace") as f:
                text += f.read()
        came = [ln for ln in text.splitlines() if "operators from torch's NVTX ranges" in ln]
        c.check(bool(came) and "after torch's stop took" not in text,
                "%s: operators from NVTX, no flush" % nvtx, came[:1])
        # which way they came: at the NVTX call (the hook), or as CUPTI's records
        way = [m.groups() for ln in came
               for m in [re.search(r"\((\d+) at the NVTX call, (\d+) through CUPTI", ln)] if m]
        at_call = sum(int(a) for a, _ in way)
        via = sum(int(b) for _, b in way)
        if nvtx.endswith("cupti"):
            c.check(via > 0 and at_call == 0, "%s: through CUPTI alone" % nvtx, came[:1])
        else:
            c.check(at_call > 0 and via == 0, "%s: taken at the NVTX call" % nvtx, came[:1])
        if nvtx in ("prof", "prof nvtx cupti"):
            dev = [r for r in csv_rows(dirs[nvtx], "operator_details.csv")
                   if float(r.get("Device Total Duration(us)") or 0) > 0]
            c.check(bool(dev), "%s: operators with device time" % nvtx, len(dev))


def load_trace(run_dir):
    with open(os.path.join(run_dir, "PROFILER_OUTPUT", "trace_view.json")) as f:
        return json.load(f)


def csv_rows(run_dir, name):
    path = os.path.join(run_dir, "PROFILER_OUTPUT", name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_backend(c, run_dir):
    text = ""
    for p in glob.glob(os.path.join(run_dir, "logs", "*.log")):
        with open(p) as f:
            text += f.read()
    c.check("cuda: tracing with CUPTI" in text, "CUDA backend started (logs/agent-*.log)")
    c.check("already has a subscriber" not in text, "no other CUPTI subscriber")
    c.check("nvml sampler: off" not in text, "NVML sampler running (logs/launcher-device.log)")
    for line in text.splitlines():
        if "cuda:" in line or "nvml" in line:
            print("      " + line.strip())


def check_trace(c, run_dir, steps):
    t = load_trace(run_dir)
    ev = t.get("traceEvents", [])
    by_cat = collections.defaultdict(list)
    for e in ev:
        by_cat[(e.get("cat"), e.get("ph"))].append(e)
    kernels = by_cat[("kernel", "X")]
    named = [k for k in kernels if k.get("name") and k["name"] != "Kernel"]
    c.check(len(kernels) >= 3 * steps, "kernels recorded", len(kernels))
    c.check(len(named) == len(kernels), "every kernel named", kernels[0]["name"] if kernels else "")
    # cudaLaunchKernel / __cudaLaunchKernel (CUDA 13's <<<>>>), cudaLaunchKernelExC,
    # cuLaunchKernel(Ex) from cuBLAS and Triton
    launches = [e for e in by_cat[("cuda_runtime", "X")] + by_cat[("cuda_driver", "X")]
                if "LaunchKernel" in e.get("name", "")]
    c.check(len(launches) >= 3 * steps, "kernel launches (cuda_runtime, cuda_driver)",
            collections.Counter(e["name"] for e in launches).most_common(4))
    starts = {e["id"] for e in by_cat[("ac2g", "s")]}
    ends = {e["id"] for e in by_cat[("ac2g", "f")]}
    pairs = len(starts & ends)
    c.check(pairs >= 0.9 * len(kernels), "launches joined to kernels (ac2g pairs)",
            "%d pairs, %d kernels" % (pairs, len(kernels)))
    copies = [e for e in by_cat[("gpu_memcpy", "X")] if "HtoD" in e.get("name", "")]
    c.check(len(copies) >= 2 * steps, "HtoD copies", copies[0]["name"] if copies else 0)
    names = collections.Counter(e.get("name") for e in by_cat[("user_annotation", "X")])
    for r in ("train_step", "forward", "backward"):
        c.check(names[r] >= steps, "NVTX range %s" % r, names[r])
    props = t.get("deviceProperties", [])
    c.check(bool(props) and bool(props[0].get("name")), "device properties",
            props[0] if props else None)


def check_tables(c, run_dir, steps):
    rows = csv_rows(run_dir, "kernel_details.csv")
    c.check(len(rows) >= 3 * steps, "kernel_details.csv rows", len(rows))
    usage = [r for r in csv_rows(run_dir, "device_usage.csv") if r.get("Device Type") == "CUDA"]
    c.check(len(usage) >= 2, "NVML samples (device_usage.csv)", len(usage))
    busy = [r for r in usage if float(r.get("Utilization(%)") or 0) > 0]
    c.check(bool(busy), "NVML saw the GPU busy", len(busy))
    apis = {r["API Name"] for r in csv_rows(run_dir, "api_statistic.csv")}
    c.check("cudaGetDevice" not in apis, "noise APIs left out (no cudaGetDevice)")
    with open(os.path.join(run_dir, "profiler_info.json")) as f:
        lost = json.load(f).get("end_info", {}).get("lost")
    print("  [info] records lost: %s" % lost)


def check_torch_trace(c, path):
    with open(path) as f:
        ev = json.load(f).get("traceEvents", [])
    kernels = sum(1 for e in ev if e.get("cat") == "kernel")
    c.check(kernels > 0, "torch.profiler saw CUDA kernels too (sanity)", kernels)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prof", default=default_prof())
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each variant, interleaved")
    ap.add_argument("--out", default=None, help="keep outputs here (default: a temp dir)")
    ap.add_argument("--max-overhead", type=float, default=None,
                    help="fail when prof's median step is more than this %% over bare")
    ap.add_argument("--ablate", action="store_true",
                    help="time prof's device tracing with each CUPTI kind left off instead")
    ap.add_argument("--lean", action="store_true",
                    help="time prof also with the CUPTI kinds Kineto traces by default only")
    args = ap.parse_args()
    variants = ABLATE if args.ablate else LEAN if args.lean else PROF_VARIANTS
    out = args.out or tempfile.mkdtemp(prefix="prof-gpu-")
    os.makedirs(out, exist_ok=True)
    train = [args.python, TRAIN, "--steps", str(args.steps), "--model", args.model]
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
    results = collections.defaultdict(list)
    run_dir = None
    def timed(name, cmd, extra=None):
        res, _ = run_train(cmd, dict(env, **(extra or {})))
        results[name].append(res)
        print("  run %d %-22s median %.3f ms, mean %.3f ms, first step to end %.0f ms" % (
            r, name, res["median_step_ms"], res.get("mean_step_ms", 0), res["job_ms"]),
            flush=True)

    parses, dirs = {}, {}
    for r in range(args.repeat):
        timed("bare", train)
        for name, flags, extra in variants:
            prof_out = os.path.join(out, "%s-%d" % (name.replace(" ", "_").replace(",", "_"), r))
            timed(name, [args.prof, "run", "--no-parse", "-o", prof_out] + flags + ["--"] + train,
                  extra)
            if r == args.repeat - 1:
                d, secs = parse_timed(args.prof, prof_out)
                parses[name] = secs
                dirs[name] = d
                if not flags and not extra:
                    run_dir = d
        trace = os.path.join(out, "torch-%d.json" % r)
        timed("torch.profiler cpu", train + ["--torch-profiler", trace, "--torch-cpu-only"])
        timed("torch.profiler", train + ["--torch-profiler", trace])

    first = results["bare"][0]
    print("%s, torch %s (CUDA %s), %s, %d steps x %d" % (
        first["device"], first["torch"], first["cuda"], args.model, args.steps, args.repeat))
    names = ["bare"] + [v[0] for v in variants] + ["torch.profiler cpu", "torch.profiler"]
    # medians of the runs' medians (the steady step), and of their means
    # (what flushes and other spikes add to the whole run)
    # and of the time from the first step to the job's end (the profiler's
    # own end included: torch.profiler's stop and export, prof's last flush)
    table = {}
    keys = ("median_step_ms", "mean_step_ms", "job_ms")
    for key in keys:
        table[key] = {n: statistics.median(x.get(key, 0) for x in results[n]) for n in names}
    print("%-22s %16s %16s %22s" % ("variant", "median step ms", "mean step ms",
                                    "first step to end ms"))
    for n in names:
        cells = []
        for key in keys:
            v, b = table[key][n], table[key]["bare"]
            cells.append("%8.3f %+6.1f%%" % (v, 100.0 * (v - b) / (b or 1)) if key != "job_ms"
                         else "%8.0f %+6.1f%%" % (v, 100.0 * (v - b) / (b or 1)))
        print("%-22s %16s %16s %22s" % (n, cells[0], cells[1], cells[2]))
    for n, secs in parses.items():
        print("  prof parse (%s, after the run): %.1f s" % (n, secs))

    if args.ablate:
        return 0
    c = Checks()
    print("prof run directory: %s" % run_dir)
    check_backend(c, run_dir)
    check_trace(c, run_dir, args.steps)
    check_tables(c, run_dir, args.steps)
    check_torch_trace(c, os.path.join(out, "torch-0.json"))
    check_saved(c, dirs)
    check_nvtx(c, dirs)
    if args.max_overhead is not None:
        med, bare = table["median_step_ms"]["prof"], table["median_step_ms"]["bare"]
        c.check(100.0 * (med - bare) / bare <= args.max_overhead,
                "prof overhead within %.1f%%" % args.max_overhead)
    print("%s: %d check(s) failed" % ("FAIL" if c.failed else "PASS", c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
