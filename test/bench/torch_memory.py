"""profile_memory's added cost, prof against torch.profiler, on the
shipped example (share/prof/examples/train.py), interleaved run by run:

  bare                 python3 train.py                                 (no profiler)
  prof                 prof run (operators)
  prof +memory         prof run --profile-memory
  torch.profiler       train.py --torch-profiler                        (CPU)
  torch.profiler +mem  train.py --torch-profiler --profile-memory

Prints each mode's median and mean step time (the mean includes prof's
flush every 10 steps and torch.profiler's stop()), and the ratios that
compare the two: what profile_memory adds to each tool, and prof's
figures over torch.profiler's. A benchmark that prints figures; it asserts
no timing.

    /usr/bin/python3 test/bench/torch_memory.py [--build build] [--runs 3] [--steps 40] [--hidden 512]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_overhead import EXAMPLE, PYTHON, SRC, step_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--hidden", type=int, default=512)
    args = ap.parse_args()
    prof = os.path.join(args.build, "bin", "prof")
    train = [PYTHON, EXAMPLE, "--steps", str(args.steps), "--hidden", str(args.hidden)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    out_dir = tempfile.mkdtemp(prefix="torch_memory-")
    under = [prof, "run", "--no-parse", "-o", out_dir]
    modes = [
        ("bare", train),
        ("prof", under + ["--"] + train),
        ("prof +memory", under + ["--profile-memory", "--"] + train),
        ("torch.profiler", train + ["--torch-profiler"]),
        ("torch.profiler +mem", train + ["--torch-profiler", "--profile-memory"]),
    ]
    med = {n: [] for n, _ in modes}
    mean = {n: [] for n, _ in modes}
    for _ in range(args.runs):
        for name, cmd in modes:
            a, b = step_ms(cmd, env, args.steps)
            med[name].append(a)
            mean[name].append(b)
    subprocess.run(["rm", "-rf", out_dir])
    m = {n: statistics.median(v) for n, v in med.items()}
    u = {n: statistics.median(v) for n, v in mean.items()}
    print("example training, hidden %d, %d steps, %d runs (median over runs)" %
          (args.hidden, args.steps, args.runs))
    print("  %-20s %12s %12s" % ("", "median step", "mean step"))
    for name, _ in modes:
        print("  %-20s %9.3f ms %9.3f ms" % (name, m[name], u[name]))
    print("ratios (median step / mean step):")
    for label, a, b in (
            ("prof +memory / prof", "prof +memory", "prof"),
            ("torch +mem / torch", "torch.profiler +mem", "torch.profiler"),
            ("prof +memory / torch +mem", "prof +memory", "torch.profiler +mem"),
            ("prof +memory / bare", "prof +memory", "bare"),
            ("torch +mem / bare", "torch.profiler +mem", "bare")):
        print("  %-26s %6.3f  %6.3f" % (label, m[a] / m[b], u[a] / u[b]))


if __name__ == "__main__":
    main()
