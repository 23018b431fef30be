"""Overhead of prof on a PyTorch training loop: median step time of the
shipped example (share/prof/examples/train.py), four ways, interleaved run
by run so that they share the machine's state:

  bare            python3 train.py                          (no prof)
  prof steps      prof run, activities DEVICE only          (step hooks, no operators)
  prof operators  prof run, default (CPU: operators)
  torch.profiler  python3 train.py --torch-profiler         (torch's profiler, CPU, no prof)

Each figure is the median over the runs of each run's median (and mean)
step time; the mean includes the operator flushes (prof: every 10 steps;
torch.profiler: its stop(), after the loop). Targets: prof steps <= 1% over bare; prof operators no worse than
torch.profiler.

    /usr/bin/python3 test/bench/torch_overhead.py [--build build] [--runs 5] [--steps 40] [--hidden 512]
                                                  [--detail]

--detail: prof with --record-shapes --with-stack against torch.profiler with
record_shapes=True and with_stack=True (target: prof no worse).
"""
import argparse
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


def step_ms(cmd, env, steps):
    """(median, mean) step time of one run of the example; the mean includes
    torch.profiler's stop() (its result processing), spread over the steps."""
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    m = re.search(r"median_step_ms=([0-9.]+) mean_step_ms=([0-9.]+)( profiler_stop_ms=([0-9.]+))?",
                  out.stdout)
    if out.returncode != 0 or not m:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), out.stdout, out.stderr))
    return float(m.group(1)), float(m.group(2)) + float(m.group(4) or 0) / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--detail", action="store_true",
                    help="prof with --record-shapes --with-stack against torch.profiler with "
                    "record_shapes=True, with_stack=True")
    args = ap.parse_args()
    prof = os.path.join(args.build, "bin", "prof")
    train = [PYTHON, EXAMPLE, "--steps", str(args.steps), "--hidden", str(args.hidden)]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    out_dir = tempfile.mkdtemp(prefix="torch_overhead-")
    under_prof = [prof, "run", "--no-parse", "-o", out_dir, "--"]
    detail = ["--record-shapes", "--with-stack"] if args.detail else []
    if args.detail:
        under_prof = under_prof[:-1] + detail + ["--"]
    modes = [
        ("bare", train, base_env),
        ("prof steps", under_prof + train, dict(base_env, PROF_OPTIONS=json.dumps({"activities": ["DEVICE"]}))),
        ("prof operators", under_prof + train, base_env),
        ("torch.profiler", train + ["--torch-profiler"] + detail, base_env),
    ]
    medians = {name: [] for name, _, _ in modes}
    means = {name: [] for name, _, _ in modes}
    for _ in range(args.runs):
        for name, cmd, env in modes:
            med, mean = step_ms(cmd, env, args.steps)
            medians[name].append(med)
            means[name].append(mean)
    subprocess.run(["rm", "-rf", out_dir])
    bare = statistics.median(medians["bare"])
    bare_mean = statistics.median(means["bare"])
    print("example training, hidden %d, %d steps, %d runs%s (median over runs of each run's "
          "figure)" % (args.hidden, args.steps, args.runs,
                       ", shapes and stacks" if args.detail else ""))
    print("  %-15s %18s %18s   %s" % ("", "median step", "mean step", "medians of the runs"))
    for name, _, _ in modes:
        med = statistics.median(medians[name])
        mean = statistics.median(means[name])
        print("  %-15s %8.3f ms %+6.1f%% %8.3f ms %+6.1f%%   %s" % (
            name, med, 100.0 * (med - bare) / bare, mean, 100.0 * (mean - bare_mean) / bare_mean,
            " ".join("%.2f" % t for t in medians[name])))
    print("  (the mean includes prof's operator flush every 10 steps, and torch.profiler's\n"
          "   result processing at its stop() after the loop, spread over the steps)")


if __name__ == "__main__":
    main()
