"""What prof's operator flush costs the training thread: the shipped
example under `prof run` (the hooks stop torch's profiler every 10 steps,
hand its results over and start it again), read back from the trace's
"prof::operators flush" ranges (the flush on the training thread) and the
agent log's operator counts. Per flush: milliseconds on the training
thread, and microseconds per operator flushed.

    /usr/bin/python3 test/bench/torch_flush.py [--build build] [--runs 3] [--steps 40]
                                               [--detail]   # --record-shapes --with-stack

Compare builds by running it with each --build on the same machine.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(SRC, "share", "prof", "examples", "train.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def one_run(prof, flags, steps):
    out = tempfile.mkdtemp(prefix="torch_flush-")
    p = subprocess.run([prof, "run", "-o", out] + flags + ["--", PYTHON, EXAMPLE, "--steps",
                                                           str(steps)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(p.stderr)
    run = glob.glob(os.path.join(out, "*_prof"))[0]
    with open(os.path.join(run, "PROFILER_OUTPUT", "trace_view.json")) as f:
        ev = json.load(f)["traceEvents"]
    ms = [e["dur"] / 1000.0 for e in ev if e.get("name") == "prof::operators flush"]
    log = "".join(open(p).read() for p in glob.glob(os.path.join(run, "logs", "agent-*.log")))
    ops = [int(n) for n in re.findall(r"operators: (\d+) sent", log)]
    subprocess.run(["rm", "-rf", out])
    # the flushes inside the loop (the last session ends at exit, outside any step)
    n = min(len(ms), len(ops))
    return ms[:n], ops[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--detail", action="store_true")
    args = ap.parse_args()
    prof = os.path.join(args.build, "bin", "prof")
    flags = ["--record-shapes", "--with-stack"] if args.detail else []
    per_flush, per_op = [], []
    for _ in range(args.runs):
        ms, ops = one_run(prof, flags, args.steps)
        for m, o in zip(ms, ops):
            if o > 100:   # a full flush, not the last few operators at exit
                per_flush.append(m)
                per_op.append(1000.0 * m / o)
    if not per_flush:
        sys.exit("no flush seen (fewer than 10 steps, or a build without the flush range)")
    print("operator flush on the training thread, %s, %d flushes (median, min, max)" % (
        "shapes and stacks" if args.detail else "operators only", len(per_flush)))
    print("  per flush     %7.2f ms  %7.2f  %7.2f" % (statistics.median(per_flush),
                                                     min(per_flush), max(per_flush)))
    print("  per operator  %7.2f us  %7.2f  %7.2f" % (statistics.median(per_op), min(per_op),
                                                     max(per_op)))


if __name__ == "__main__":
    main()
