"""A full filesystem under the run directory: a small tmpfs mounted in a
private mount namespace (`unshare -rm`), most of it taken by a filler file.

The program records more than fits. Asserted: the program is not killed
(no SIGBUS from a shared mapping of a hole on a full tmpfs: the agent
allocates each chunk's blocks before mapping it) and prof mirrors its exit
status; prof says, once and while the program still runs, that the
filesystem filled; at the end, which one and how many records were lost;
its own parse fails cleanly (the outputs do not fit) and keeps the raw
data; `prof parse` on a copy elsewhere, and in place once the filler is
gone, reads every record written, with records recorded + lost equal to
the records the program made."""
import collections
import json
import os
import re
import shutil
import subprocess
import unittest

from proftest import PROF, PYTHON, ProfTestCase, workload

N, THREADS = 60000, 3        # marks per thread; 4 threads: ~14 MB of raw data
SIZE_MB, FILLER_MB = 16, 12  # about 4 MB left for the run

SCRIPT = r"""
set -u
mnt=$1 res=$2; shift 2
mount -t tmpfs -o size=%dm tmpfs "$mnt" 2>"$res/mount.err" || exit 77
dd if=/dev/zero of="$mnt/filler" bs=1M count=%d 2>/dev/null || exit 78
"$PROF" run -o "$mnt/out" "$@" >"$res/run.out" 2>"$res/run.err"
echo $? >"$res/run.rc"
run_dir=$(ls -d "$mnt"/out/*_prof)
echo "$run_dir" >"$res/run_dir"
cp -a "$run_dir" "$res/copy"
rm -f "$mnt/filler"
"$PROF" parse "$run_dir" >"$res/parse.out" 2>"$res/parse.err"
echo $? >"$res/parse.rc"
cp -a "$run_dir/PROFILER_OUTPUT" "$res/in_place"
""" % (SIZE_MB, FILLER_MB)


# Fills the filesystem, then waits without recording anything: only the
# launcher's host sampler (every millisecond) still needs room.
FILL_AND_WAIT = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
for size in (1 << 16, 4096):
    try:
        while True:
            os.write(fd, b"\0" * size)
    except OSError:
        pass
os.close(fd)
print("filler: the disk is full", file=sys.stderr, flush=True)
time.sleep(4)
print("filler: exits", file=sys.stderr, flush=True)
"""


def marks(trace_path):
    with open(trace_path) as f:
        trace = json.load(f)
    out = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        prefix, _, k = e.get("name", "").rpartition("-")
        if e.get("ph") == "i" and prefix and k.isdigit():
            out[prefix].append(int(k))
    return {p: sorted(v) for p, v in out.items()}


class FullDisk(ProfTestCase):
    def read(self, name):
        with open(os.path.join(self.res, name)) as f:
            return f.read()

    def run_full(self, args=None):
        if not shutil.which("unshare"):
            self.skipTest("no unshare(1): cannot mount a small filesystem")
        self.res = os.path.join(self.tmp, "res")
        mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(self.res)
        os.mkdir(mnt)
        args = args or ["--sampling-interval", "0", "--",
                        workload("tx_killme"), "fill", str(N), str(THREADS)]
        env = dict(os.environ, PROF=PROF)
        p = subprocess.run(["unshare", "-rm", "sh", "-c", SCRIPT, "sh", mnt, self.res, *args],
                           capture_output=True, text=True, env=env, timeout=240)
        if p.returncode == 77 or (p.returncode and not os.path.exists(
                os.path.join(self.res, "run.rc"))):
            err = p.stderr + (self.read("mount.err") if os.path.exists(
                os.path.join(self.res, "mount.err")) else "")
            self.skipTest("cannot mount a tmpfs in a private namespace "
                          "(unshare -rm): %s" % err.strip())
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_full_disk(self):
        self.run_full()
        run_dir = self.read("run_dir").strip()
        err = self.read("run.err")
        # The program ran to its end: its status, not SIGBUS's 135.
        self.assertEqual(int(self.read("run.rc")), 7, err)
        self.assertNotIn("killed by signal", err)
        # Said once while the program ran: before its last words.
        live = "prof: the filesystem holding %s is full (no space left on device): streams " \
            "stop recording as they need room there, and what they drop is counted as " \
            "lost; free space there now to keep the rest; %s runs on\n" % (
                run_dir, workload("tx_killme"))
        self.assertEqual(err.count(live), 1, err)
        self.assertLess(err.index(live), err.index("tx_killme fill: exits\n"), err)
        m = re.search(r"prof: the filesystem holding (\S+) is full \(no space left on "
                      r"device\): (\d+) of (\d+) streams stopped recording there, (\d+) "
                      r"records lost", err)
        self.assertIsNotNone(m, err)
        self.assertEqual(m.group(1), run_dir)
        self.assertGreaterEqual(int(m.group(2)), 1)
        lost = int(m.group(4))
        # prof's own parse: the outputs did not fit; said, raw data kept.
        self.assertIn("No space left on device", err)
        self.assertIn("the raw data is kept", err)
        with open(os.path.join(self.res, "copy", "profiler_info.json")) as f:
            end = json.load(f)["end_info"]
        self.assertEqual(end["lost"], lost)
        self.assertEqual(end["disk_full_streams"], int(m.group(2)))
        refused = int(end["streams_not_created"])
        # Elsewhere, with room: every record written is read.
        copy = os.path.join(self.res, "copy")
        p = subprocess.run([PROF, "parse", copy], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("%d records lost while recording" % lost, p.stdout)
        got = marks(os.path.join(copy, "PROFILER_OUTPUT", "trace_view.json"))
        prefixes = ["main"] + ["w%d" % i for i in range(THREADS)]
        self.assertLessEqual(set(got), set(prefixes))
        for prefix, ks in got.items():   # each stream stopped at a point
            self.assertEqual(ks, list(range(len(ks))), prefix)
        recorded = sum(len(ks) for ks in got.values())
        self.assertLess(recorded, N * len(prefixes), "the filesystem never filled")
        # recorded + lost = made, but for threads that got no stream at all.
        self.assertEqual(recorded + lost + refused * N, N * len(prefixes))
        # In place, once the filler is gone: the same records.
        self.assertEqual(int(self.read("parse.rc")), 0, self.read("parse.err"))
        self.assertEqual(marks(os.path.join(self.res, "in_place", "trace_view.json")), got)

    def test_launcher_stream_says_it_too(self):
        # the program fills the disk and records nothing more: the host
        # sampler's stream, the launcher's own, is the one that meets the
        # full filesystem, and prof says so while the program runs
        prog = os.path.join(self.tmp, "fill_and_wait.py")
        with open(prog, "w") as f:
            f.write(FILL_AND_WAIT)
        mnt = os.path.join(self.tmp, "mnt")
        self.run_full(["--sampling-interval", "1", "--activities", "", "--",
                       PYTHON, prog, os.path.join(mnt, "more")])
        run_dir = self.read("run_dir").strip()
        err = self.read("run.err")
        self.assertEqual(int(self.read("run.rc")), 0, err)
        live = "prof: the filesystem holding %s is full (no space left on device)" % run_dir
        self.assertEqual(err.count(live + ": streams stop recording"), 1, err)
        self.assertLess(err.index("filler: the disk is full"), err.index(live), err)
        self.assertLess(err.index(live), err.index("filler: exits\n"), err)
        with open(os.path.join(self.res, "copy", "profiler_info.json")) as f:
            end = json.load(f)["end_info"]
        self.assertGreaterEqual(end["disk_full_streams"], 1, end)


if __name__ == "__main__":
    unittest.main()
