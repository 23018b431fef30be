"""Shared helpers for prof's end-to-end tests: run prof, find the run
directory, load its outputs."""
import csv
import glob
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

PROF = os.environ.get("PROF_BIN", "prof")
BUILD = os.environ.get("PROF_BUILD", "")
WORKLOADS = os.environ.get("PROF_WORKLOADS", "")
TMP = os.environ.get("PROF_TEST_TMP", tempfile.gettempdir())
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"


def workload(name):
    return os.path.join(WORKLOADS, name)


def run_sim_ranks(out, steps, slow_rank, phase):
    """Four ranks of sim_ranks (RANK 0..3, WORLD_SIZE 4) at once under one
    `prof run -o out`, whose own environment names no rank; the finished
    process, and the run directory."""
    loop = ("for r in 0 1 2 3; do RANK=$r WORLD_SIZE=4 %s %d %d %s & done; wait"
            % (workload("sim_ranks"), steps, slow_rank, phase))
    env = dict(os.environ)
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    p = subprocess.run([PROF, "run", "-o", out, "--sampling-interval", "0", "--",
                        "sh", "-c", loop], capture_output=True, text=True, env=env, timeout=120)
    dirs = glob.glob(os.path.join(out, "*_prof"))
    return p, dirs[0] if dirs else None


def prof_features():
    """The features `prof --version` lists (agent, tx, ..., asan, tsan)."""
    out = subprocess.run([PROF, "--version"], capture_output=True, text=True).stdout
    line = next((l for l in out.splitlines() if l.startswith("features:")), "features:")
    return set(f.strip() for f in line[len("features:"):].split(",") if f.strip())


def _sanitizer_runtime():
    """In a sanitized build: (the runtime prof links, its options variable,
    the options prof run gives children: platform/launcher/spawn_asan.c);
    else None."""
    out = subprocess.run(["ldd", PROF], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if not parts or "=>" not in parts:
            continue
        name, path = parts[0], parts[parts.index("=>") + 1]
        if name.startswith(("libasan.so", "libclang_rt.asan")):
            return path, "ASAN_OPTIONS", "detect_leaks=0:handle_segv=0:handle_sigbus=0:" \
                "handle_sigfpe=0"
        if name.startswith("libtsan.so"):
            return path, "TSAN_OPTIONS", "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:" \
                "report_signal_unsafe=0:report_thread_leaks=0"
    return None


def plain_python_env(pydir, extra=None):
    """The environment of a plain python (no prof run) that imports the prof
    package from `pydir`: no agent variables. In a sanitized build the
    instrumented agent the package loads needs the sanitizer's runtime
    first in the process, as prof run puts it for its children."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PROF_AGENT_") and k != "LD_PRELOAD"}
    env["PYTHONPATH"] = pydir
    san = _sanitizer_runtime()
    if san:
        env["LD_PRELOAD"] = san[0]
        env[san[1]] = san[2] + (":" + env[san[1]] if env.get(san[1]) else "")
    env.update(extra or {})
    return env


RAW_HEADER_SIZE, RAW_CHUNK_HEADER_SIZE, RAW_CHUNK_MAGIC = 4096, 56, 0x4B4E4843


def raw_records(paths, rec_type=None):
    """Records (of type rec_type, or all) in the committed part of every
    chunk of the raw files `paths` (raw_format.h: chunk_size at 20 and
    chunks at 104 of the header; a chunk's magic, index and committed
    bytes, then records of {u16 type, u16 flags, u32 size, ...}). Exact,
    and much faster than loading a trace."""
    n = 0
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        chunk_size, = struct.unpack_from("<I", data, 20)
        nchunks, = struct.unpack_from("<Q", data, 104)
        for c in range(nchunks):
            base = RAW_HEADER_SIZE + c * chunk_size
            if base + RAW_CHUNK_HEADER_SIZE > len(data):
                continue
            magic, _, committed = struct.unpack_from("<IIQ", data, base)
            if magic != RAW_CHUNK_MAGIC:
                continue
            pos, end = base + RAW_CHUNK_HEADER_SIZE, base + RAW_CHUNK_HEADER_SIZE + committed
            while pos < end:
                typ, _, size = struct.unpack_from("<HHI", data, pos)
                n += rec_type is None or typ == rec_type
                pos += size
    return n


class Run:
    """One `prof run`: its exit status, output, and run directory."""

    def __init__(self, proc, out_dir):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.run_dir = self._said_dir(proc.stderr) or self._newest(out_dir)

    @staticmethod
    def _said_dir(stderr):
        """The run directory prof names ("prof: recording into DIR"): runs
        sharing an output directory sort by pid first, not by age."""
        for line in (stderr or "").splitlines():
            if line.startswith("prof: recording into "):
                d = line[len("prof: recording into "):].strip()
                if os.path.isdir(d):
                    return d
        return None

    @staticmethod
    def _newest(out_dir):
        dirs = glob.glob(os.path.join(out_dir, "*_prof"))
        return max(dirs, key=os.path.getmtime) if dirs else None

    def path(self, *parts):
        return os.path.join(self.run_dir, *parts)

    def output(self, name):
        return self.path("PROFILER_OUTPUT", name)

    def trace(self):
        with open(self.output("trace_view.json")) as f:
            return json.load(f)

    def csv_rows(self, name):
        with open(self.output(name), newline="") as f:
            return list(csv.reader(f))

    def json(self, *parts):
        with open(self.path(*parts)) as f:
            return json.load(f)


class ProfTestCase(unittest.TestCase):
    def setUp(self):
        os.makedirs(TMP, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix=self.id().split(".")[-1] + "-", dir=TMP)

    def tearDown(self):
        if not getattr(self, "_keep", False):
            shutil.rmtree(self.tmp, ignore_errors=True)

    def assertParsedClean(self, run):
        """The parse read everything: no damage reported, parse.done present."""
        self.assertNotIn("damaged", run.stderr)
        self.assertNotIn("skipped", run.stderr)
        self.assertTrue(os.path.exists(run.output("parse.done")), run.stderr)

    def prof_run(self, cmd, *options, env=None, timeout=120, out=None):
        out = out or os.path.join(self.tmp, "out")
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run([PROF, "run", "-o", out, *options, "--", *cmd],
                              capture_output=True, text=True, env=full_env, timeout=timeout)
        return Run(proc, out)


def events(trace, ph=None, cat=None, name=None, pid=None):
    out = []
    for e in trace["traceEvents"]:
        if ph is not None and e.get("ph") != ph:
            continue
        if cat is not None and e.get("cat") != cat:
            continue
        if name is not None and e.get("name") != name:
            continue
        if pid is not None and e.get("pid") != pid:
            continue
        out.append(e)
    return out


def thread_names(trace):
    """{(pid, tid): name} from thread_name metadata."""
    return {(e["pid"], e["tid"]): e["args"]["name"]
            for e in trace["traceEvents"] if e.get("ph") == "M" and e.get("name") == "thread_name"}


def span(e):
    ts = float(e["ts"])
    return ts, ts + float(e.get("dur", 0))


def recorded_steps(trace):
    """The numbers of the steps a trace holds (its ProfilerStep#N)."""
    return sorted(int(e["name"].split("#")[1]) for e in events(trace, ph="X")
                  if e["name"].startswith("ProfilerStep#"))


def ticks(trace):
    """The N of tx_steps' "tick-N" marks a trace holds."""
    return sorted(int(e["name"].split("-")[1]) for e in events(trace, ph="i")
                  if e["name"].startswith("tick-"))
