"""Wall time of whole Python programs under prof, against the same program
bare, interleaved run by run (the machines are shared and noisy: read
the ratios). Two programs:

  import only   python3 -c "import torch.distributed.run"  (a process that
                imports torch and never trains: torchrun's launcher)
  cnn           test/workloads/torch_cnn_fakedata.py: torchvision FakeData
                through 2 forked DataLoader workers, 6 steps, an eval loop

each bare and under `prof run --no-parse --record-shapes --with-stack`.
Target (issue 17): the import-only process at most 1.5x its bare time.

    /usr/bin/python3 test/bench/torch_wall.py [--build build] [--runs 5]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
PROGRAMS = [
    ("import only", [PYTHON, "-c", "import torch.distributed.run"]),
    ("cnn", [PYTHON, os.path.join(SRC, "test", "workloads", "torch_cnn_fakedata.py")]),
]


def wall(cmd, env):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    prof = os.path.join(args.build, "bin", "prof")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    out = tempfile.mkdtemp(prefix="torch_wall-")
    under = [prof, "run", "--no-parse", "-o", out, "--record-shapes", "--with-stack", "--"]
    times = {(n, m): [] for n, _ in PROGRAMS for m in ("bare", "prof")}
    for _ in range(args.runs):
        for name, cmd in PROGRAMS:
            times[(name, "bare")].append(wall(cmd, env))
            times[(name, "prof")].append(wall(under + cmd, env))
    subprocess.run(["rm", "-rf", out])
    print("wall time, %d runs interleaved (median; prof: --record-shapes --with-stack)" % args.runs)
    for name, _ in PROGRAMS:
        b = statistics.median(times[(name, "bare")])
        p = statistics.median(times[(name, "prof")])
        print("  %-12s bare %7.2f s   prof %7.2f s   %.2fx" % (name, b, p, p / b))


if __name__ == "__main__":
    main()
