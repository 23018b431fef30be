"""The device path end to end on the simulated device: libprof_sim's
activity reaching prof through the HAL (injection, subscription, batches,
the 100 ms flusher, schedule windows) and the outputs made of it.

test/workloads/sim_work.c fixes every figure: per step, on stream 1 the
kernels sim_gemm (2 ms) and sim_relu (0.5 ms) and an allreduce (1 ms) over
group tp0; on stream 2, launched from a second thread, a 1 MiB HtoD copy
(1 ms) and a 64 KiB memset (0.3 ms); a 1 MiB allocation freed at the
step's end."""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from proftest import (BUILD, PROF, PYTHON, SRC, TMP, ProfTestCase, Run, events, raw_records, span,
                      workload)

MS = 1000.0                  # outputs count microseconds
KERNELS = {"sim_gemm": 2 * MS, "sim_relu": 0.5 * MS}
COPY_US, SET_US, COLL_US = 1 * MS, 0.3 * MS, 1 * MS
# the trace shows collectives as kernels, as Kineto shows NCCL's, and
# under NCCL's names (the sim's in "sim name"), as HTA looks for them
NCCL_ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float"
TRACE_KERNELS = dict(KERNELS, **{NCCL_ALLREDUCE: COLL_US})
# Ops last what they were asked, never less; a loaded machine may wake a
# worker late (measured up to 3 ms with every CPU busy), so the upper bound
# is loose: it still tells ns from us.
SLACK_US = 10 * MS
STEPS = 3


# A PROF_SANITIZE build with gcc: gcc 12's ASan runtime (libasan.so) takes
# no allocator lock around fork(), so a child forked while another thread is
# inside malloc can hang on that lock (a runtime limitation, not prof's;
# clang's runtime does not).
GCC_ASAN_BUILD = "libasan.so" in subprocess.run(["ldd", PROF], capture_output=True,
                                                text=True).stdout


def dev_records(steps, created=True, destroyed=True):
    """Records sim_work writes to dev.raw when `steps` steps are recorded:
    its strings, one DEV_INFO, and per step 9 API calls, 4 activities, 2
    stream syncs (the device's side, as CUPTI reports it), 1 collective, 2
    memory records; 2 API calls to create the streams and 2 to destroy them
    when those are recorded."""
    strings = {"prof sim device", "prof_sim_malloc", "prof_sim_kernel",
               "prof_sim_collective", "prof_sim_memcpy", "prof_sim_memset", "sim_gemm",
               "sim_relu", "sim_allreduce", "tp0", "0", "prof_sim_stream_sync", "prof_sim_free",
               "Stream Sync"}
    apis = 9 * steps
    for recorded, name in ((created, "prof_sim_stream_create"),
                           (destroyed, "prof_sim_stream_destroy")):
        if recorded:
            strings.add(name)
            apis += 2
    return len(strings) + 1 + apis + steps * (4 + 2 + 1 + 2)


def us(cell):
    """A CSV time cell: Ascend writes some with a trailing tab."""
    return float(cell.strip())


class Table:
    """A CSV output with columns found by name."""

    def __init__(self, rows):
        self.header, self.rows = rows[0], rows[1:]

    def col(self, *names):
        for n in names:
            if n in self.header:
                return self.header.index(n)
        raise AssertionError("none of %r in %r" % (names, self.header))

    def values(self, *names):
        i = self.col(*names)
        return [r[i] for r in self.rows]


def kind_of(name, typ):
    text = (name + " " + typ).lower()
    for k in ("memcpy", "memset", "communication"):
        if k in text:
            return k
    return "kernel"


class RawDeviceStream(ProfTestCase):
    """dev.raw as written, read back by `prof parse -v`: no parse outputs needed."""

    def records(self, run):
        info = run.json("profiler_info.json")
        return info["end_info"]["records"]

    def run_pair(self, *args, options=(), cmd=None):
        """sim_work (or `cmd`) with and without DEVICE; host sampling off,
        so every stream but dev.raw holds the same records in both."""
        common = ["--no-parse", "--sampling-interval", "0", *options]
        cmd = cmd or [workload("sim_work"), *args]
        with_dev = self.prof_run(cmd, *common, out=os.path.join(self.tmp, "dev"))
        without = self.prof_run(cmd, *common, "--activities", "CPU",
                                out=os.path.join(self.tmp, "cpu"))
        return with_dev, without

    def parse_v(self, run):
        p = subprocess.run([PROF, "parse", "-v", run.run_dir], capture_output=True,
                           text=True, timeout=120)
        return p, [l for l in p.stderr.splitlines() if l.startswith("prof parse: ") and ".raw: " in l]

    def test_record_count(self):
        with_dev, without = self.run_pair(str(STEPS))
        self.assertEqual(with_dev.rc, 0, with_dev.stderr)
        self.assertEqual(without.rc, 0, without.stderr)
        self.assertEqual(glob.glob(without.path("raw", "*", "dev.raw")), [],
                         "activities CPU alone still wrote a device stream")
        self.assertEqual(len(glob.glob(with_dev.path("raw", "*", "dev.raw"))), 1)
        self.assertEqual(self.records(with_dev) - self.records(without), dev_records(STEPS))
        p, streams = self.parse_v(with_dev)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("damaged", p.stderr)
        self.assertNotIn("skipped", p.stderr)
        dev = [l for l in streams if "/dev.raw:" in l]
        self.assertEqual(len(dev), 1, p.stderr)
        self.assertIn("monotonic clock", dev[0])
        self.assertNotIn("not closed", dev[0])
        self.assertIn("%d records" % self.records(with_dev), p.stdout)
        self.assertIn("device backend sim: started", agent_logs(with_dev))

    def test_killed_process_keeps_completed_activity(self):
        # killed 300 ms after its work: the flusher wrote it all before
        with_dev, without = self.run_pair("2", "kill")
        self.assertEqual(with_dev.rc, -9, with_dev.stderr)   # prof died of it too
        self.assertEqual(without.rc, -9, without.stderr)
        self.assertEqual(self.records(with_dev) - self.records(without),
                         dev_records(2, destroyed=False))
        p, streams = self.parse_v(with_dev)
        dev = [l for l in streams if "/dev.raw:" in l]
        self.assertEqual(len(dev), 1, p.stderr)
        self.assertIn("not closed", dev[0])

    def test_schedule_window_gates_activity(self):
        # step 2 alone records: the streams' creation and destruction, and
        # steps 1 and 3, are not in dev.raw
        with_dev, without = self.run_pair("3", options=["--wait", "1", "--active", "1",
                                                        "--repeat", "1"])
        self.assertEqual(with_dev.rc, 0, with_dev.stderr)
        self.assertEqual(self.records(with_dev) - self.records(without),
                         dev_records(1, created=False, destroyed=False))


    @unittest.skipIf(GCC_ASAN_BUILD, "fork() with threads in malloc can hang in gcc's ASan runtime")
    def test_fork_child_has_its_own_stream(self):
        with_dev, without = self.run_pair(cmd=[workload("sim_fork")])
        self.assertEqual(with_dev.rc, 0, with_dev.stderr)
        # parent: 6 strings, create, kernel, sync, DEV_INFO, parent_k, its sync;
        # child: 6 strings, create, 2 kernels, device sync, DEV_INFO, 2 child_k,
        # its sync
        # (counted in dev.raw: the program records nothing on the host, so
        # only the device run has thread streams, for each image's record)
        self.assertEqual(dev_raw_records(with_dev), 12 + 14)
        self.assertEqual(self.records(without), 0)
        p, streams = self.parse_v(with_dev)
        dev = [l for l in streams if "/dev.raw:" in l]
        self.assertEqual(len(dev), 2, p.stderr)
        self.assertEqual(len({l.split("pid ")[1].split()[0] for l in dev}), 2)
        for l in dev:
            self.assertNotIn("not closed", l)

    def test_library_loaded_late_injects_itself(self):
        lib = os.path.join(BUILD, "lib", "libprof_sim.so")
        with_dev, without = self.run_pair(cmd=[PYTHON, os.path.join(SRC, "test", "workloads", "sim_ctypes.py"), lib])
        self.assertEqual(with_dev.rc, 0, with_dev.stderr)
        # 6 strings, create, 3 launches, sync, DEV_INFO, 3 kernels, the sync's
        self.assertEqual(dev_raw_records(with_dev), 6 + 10)


class Syncs(ProfTestCase):
    def test_sync_events_as_kineto_writes_them(self):
        run = self.prof_run([workload("sim_work"), "2"])
        self.assertEqual(run.rc, 0, run.stderr)
        trace = run.trace()
        calls = {e["args"]["correlation"]: e for e in events(trace, ph="X", cat="cuda_runtime")
                 if e["name"] == "cudaStreamSynchronize"}
        syncs = events(trace, ph="X", cat="cuda_sync")
        self.assertEqual(len(syncs), len(calls))
        self.assertEqual(len(syncs), 4)   # two streams a step
        for e in syncs:
            a = e["args"]
            self.assertEqual((e["name"], a["cuda_sync_kind"]), ("Stream Sync", "Stream Sync"))
            call = calls[a["correlation"]]   # the call it waited in, by correlation
            self.assertGreaterEqual(float(e["ts"]) + 0.001, float(call["ts"]))
            self.assertEqual(e["pid"], 0)
            self.assertIn(a["stream"], (1, 2))


class OneRun(ProfTestCase):
    """One `prof run` of the workload CMD for every test of the class:
    they read different outputs of it."""

    CMD = ()

    @classmethod
    def setUpClass(cls):
        os.makedirs(TMP, exist_ok=True)
        cls.tmpdir = tempfile.mkdtemp(prefix=cls.__name__ + "-", dir=TMP)
        out = os.path.join(cls.tmpdir, "out")
        proc = subprocess.run([PROF, "run", "-o", out, "--", workload(cls.CMD[0]), *cls.CMD[1:]],
                              capture_output=True, text=True, timeout=120)
        cls.out = Run(proc, out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmpdir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.assertEqual(self.out.rc, 0, self.out.stderr)
        self.assertParsedClean(self.out)


class EventSyncs(OneRun):
    """test/workloads/sim_events.c: per step, stream B (2) waits for an
    event recorded on stream A (1) after A's kernel "producer", then runs
    "consumer"; the host synchronizes on the event. The trace says so as
    Kineto does (HTA's critical path joins the waits to the cudaEventRecord
    by these args), and the simulated timeline honours the wait."""

    STEPS = 2
    # the sim's calls, each under CUDA's name
    CALLS = {"cudaEventCreate": ("prof_sim_event_create", 1),
             "cudaEventRecord": ("prof_sim_event_record", STEPS),
             "cudaStreamWaitEvent": ("prof_sim_stream_wait_event", STEPS),
             "cudaEventSynchronize": ("prof_sim_event_synchronize", STEPS),
             "cudaEventDestroy": ("prof_sim_event_destroy", 1)}

    CMD = ("sim_events", str(STEPS))

    def setUp(self):
        super().setUp()
        self.assertIn("stream A 1, stream B 2, event 1", self.out.stdout)
        self.trace = self.out.trace()
        self.runtime = events(self.trace, ph="X", cat="cuda_runtime")

    def calls(self, name):
        return {e["args"]["correlation"]: e for e in self.runtime if e["name"] == name}

    def test_api_names(self):
        for cuda, (sim, n) in self.CALLS.items():
            calls = [e for e in self.runtime if e["name"] == cuda]
            self.assertEqual(len(calls), n, cuda)
            self.assertEqual({e["args"]["sim name"] for e in calls}, {sim})
        # api_statistic.csv keeps the sim's names
        t = Table(self.out.csv_rows("api_statistic.csv"))
        counts = dict(zip(t.values("API Name"), (int(c) for c in t.values("Count"))))
        for sim, n in self.CALLS.values():
            self.assertEqual(counts.get(sim), n, sim)
        # the syncs are no tasks: kernel_details.csv holds the kernels alone
        t = Table(self.out.csv_rows("kernel_details.csv"))
        self.assertEqual(collections.Counter(t.values("Name")),
                         {"producer": self.STEPS, "consumer": self.STEPS})

    def test_waits_name_the_record(self):
        records = self.calls("cudaEventRecord")
        syncs = events(self.trace, ph="X", cat="cuda_sync")
        for kind, call, stream in (("Stream Wait Event", "cudaStreamWaitEvent", 2),
                                   ("Event Sync", "cudaEventSynchronize", -1)):
            waits = [e for e in syncs if e["name"] == kind]
            self.assertEqual(len(waits), self.STEPS, kind)
            callers = self.calls(call)
            for e in waits:
                a = e["args"]
                self.assertEqual(a["cuda_sync_kind"], kind)
                self.assertEqual((e["pid"], a["device"], a["stream"]), (0, 0, stream), e)
                self.assertIn(a["correlation"], callers, e)   # the call that waited
                self.assertEqual(a["wait_on_stream"], 1, e)
                self.assertEqual(a["wait_on_cuda_event_id"], 1, e)
                # the cudaEventRecord in this trace that last recorded it
                # before the wait: this step's, not an earlier one
                before = [c for c in records if c < a["correlation"]]
                self.assertEqual(a["wait_on_cuda_event_record_corr_id"], max(before), e)
        self.assertEqual(len({e["args"]["wait_on_cuda_event_record_corr_id"] for e in syncs
                              if e["name"] == "Event Sync"}), self.STEPS)

    def test_timeline_honours_the_wait(self):
        kernels = events(self.trace, ph="X", cat="kernel")
        producers = sorted((span(e) for e in kernels if e["name"] == "producer"))
        consumers = sorted((span(e) for e in kernels if e["name"] == "consumer"))
        self.assertEqual((len(producers), len(consumers)), (self.STEPS, self.STEPS))
        syncs = sorted(span(e) for e in events(self.trace, ph="X", name="Event Sync"))
        for p, c, s in zip(producers, consumers, syncs):
            # queued at once on B, "consumer" starts only once "producer" is done
            self.assertGreaterEqual(c[0] + 0.001, p[1])
            # and the host's Event Sync ends only then too
            self.assertGreaterEqual(s[1] + 0.001, p[1])


class GpuUserAnnotation(ProfTestCase):
    def test_ranges_span_their_kernels_per_stream(self):
        lib = os.path.join(BUILD, "lib", "libprof_sim.so")
        run = self.prof_run([PYTHON, os.path.join(SRC, "test", "workloads", "sim_ranges.py"),
                             lib])
        self.assertEqual(run.rc, 0, run.stderr)
        trace = run.trace()
        kernels = {e["name"]: e for e in events(trace, ph="X", cat="kernel")}
        ann = events(trace, ph="X", cat="gpu_user_annotation")
        self.assertEqual(sorted(e["name"] for e in ann), ["bwd", "fwd"])
        for e in ann:
            ks = [kernels[k] for k in (("k_fwd1", "k_fwd2") if e["name"] == "fwd" else ("k_bwd",))]
            # on the device's pid and the stream's tid, from the first task to the last
            self.assertEqual((e["pid"], e["tid"]), (ks[0]["pid"], ks[0]["tid"]))
            self.assertAlmostEqual(float(e["ts"]), min(float(k["ts"]) for k in ks), places=3)
            end = max(float(k["ts"]) + float(k["dur"]) for k in ks)
            self.assertAlmostEqual(float(e["ts"]) + float(e["dur"]), end, places=3)
        self.assertNotEqual(kernels["k_fwd1"]["tid"], kernels["k_bwd"]["tid"])


def dev_raw_records(run):
    """Records in the run's dev.raw streams, read from the raw files."""
    return raw_records(glob.glob(run.path("raw", "*", "dev.raw")))


def agent_logs(run):
    text = ""
    for f in glob.glob(run.path("logs", "agent-*.log")):
        with open(f) as fh:
            text += fh.read()
    return text


class WithoutProf(unittest.TestCase):
    def test_runs_alone_with_its_durations(self):
        t0 = time.monotonic()
        p = subprocess.run([workload("sim_work"), "2"], capture_output=True, text=True,
                           timeout=60)
        elapsed = time.monotonic() - t0
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("2 steps on streams 1 and 2", p.stdout)
        # stream 1 holds 3.5 ms of work per step, waited for
        self.assertGreaterEqual(elapsed, 2 * 3.5e-3)


class DeviceOutputs(OneRun):
    """kernel_details.csv, trace_view.json, memory_record.csv and
    communication.json made of the sim device's activity."""

    CMD = ("sim_work", str(STEPS))

    def test_kernel_details(self):
        t = Table(self.out.csv_rows("kernel_details.csv"))
        names, types = t.values("Name"), t.values("Type")
        streams = [int(v) for v in t.values("Stream ID", "Stream Id")]
        durs = [us(v) for v in t.values("Duration(us)")]
        kinds = [kind_of(n, ty) for n, ty in zip(names, types)]
        # collectives are rows too (Type COMMUNICATION), as NCCL kernels are
        self.assertEqual(collections.Counter(kinds), {"kernel": 2 * STEPS, "memcpy": STEPS,
                                                      "memset": STEPS, "communication": STEPS})
        expect = {"memcpy": COPY_US, "memset": SET_US, "communication": COLL_US}
        for name, kind, stream, dur in zip(names, kinds, streams, durs):
            want = KERNELS[name] if kind == "kernel" else expect[kind]
            self.assertEqual(stream, 2 if kind in ("memcpy", "memset") else 1, name)
            self.assertGreaterEqual(dur, want - 1, name)
            self.assertLessEqual(dur, want + SLACK_US, name)
        self.assertEqual(collections.Counter(n for n, k in zip(names, kinds) if k == "kernel"),
                         {"sim_gemm": STEPS, "sim_relu": STEPS})
        steps = collections.Counter(int(v) for v in t.values("Step Id"))
        self.assertEqual(steps, {n: 5 for n in range(1, STEPS + 1)})

    def test_trace_device_events(self):
        trace = self.out.trace()
        kernels = events(trace, ph="X", cat="kernel")
        copies = events(trace, ph="X", cat="gpu_memcpy")
        sets = events(trace, ph="X", cat="gpu_memset")
        self.assertEqual(collections.Counter(e["name"] for e in kernels),
                         {name: STEPS for name in TRACE_KERNELS})
        self.assertEqual((len(copies), len(sets)), (STEPS, STEPS))
        for e in kernels + copies + sets:
            self.assertEqual(int(e["args"]["device"]), 0)
            self.assertIn(int(e["args"]["stream"]), (1, 2))
            self.assertGreater(int(e["args"]["correlation"]), 0)
        for e in kernels:
            self.assertGreaterEqual(float(e["dur"]), TRACE_KERNELS[e["name"]] - 1)
            self.assertLessEqual(float(e["dur"]), TRACE_KERNELS[e["name"]] + SLACK_US)
        # a stream runs its work in order, one op at a time
        on1 = sorted((span(e) for e in kernels), key=lambda s: s[0])
        for a, b in zip(on1, on1[1:]):
            self.assertLessEqual(a[1], b[0] + 0.001)

    def test_launch_flows(self):
        trace = self.out.trace()
        # the sim's launches under CUDA's name, theirs in "sim name"
        apis = events(trace, ph="X", name="cudaLaunchKernel")
        self.assertEqual(sorted(collections.Counter(a["args"]["sim name"] for a in apis).items()),
                         [("prof_sim_collective", STEPS), ("prof_sim_kernel", 2 * STEPS)])
        self.assertTrue(all(a["cat"] == "cuda_runtime" for a in apis))
        starts = {e["id"]: e for e in events(trace, ph="s", cat="ac2g")}
        ends = {e["id"]: e for e in events(trace, ph="f", cat="ac2g")}
        for k in events(trace, ph="X", cat="kernel"):
            corr = int(k["args"]["correlation"])
            s, f = starts.get(corr), ends.get(corr)
            self.assertIsNotNone(s, "no ac2g flow from the launch of %r" % k)
            self.assertIsNotNone(f, "no ac2g flow into %r" % k)
            self.assertAlmostEqual(float(f["ts"]), float(k["ts"]), places=2)
            self.assertEqual((f["pid"], f["tid"]), (k["pid"], k["tid"]))
            launch = [a for a in apis if (a["pid"], a["tid"]) == (s["pid"], s["tid"]) and
                      span(a)[0] - 0.001 <= float(s["ts"]) <= span(a)[1] + 0.001]
            self.assertEqual(len(launch), 1, "flow %r starts in no launch call" % s)
            self.assertLessEqual(span(launch[0])[0], float(k["ts"]))

    def test_api_calls_on_their_threads(self):
        trace = self.out.trace()
        by_name = collections.defaultdict(set)
        for e in events(trace, ph="X"):
            sim = (e.get("args") or {}).get("sim name", "")
            if sim.startswith("prof_sim_"):
                by_name[sim].add(e["tid"])
        self.assertEqual(len(by_name["prof_sim_kernel"]), 1)
        # the copies come from a new "copier" thread each step
        self.assertEqual(len(by_name["prof_sim_memcpy"]), STEPS)
        self.assertFalse(by_name["prof_sim_kernel"] & by_name["prof_sim_memcpy"])

    def test_memory_record(self):
        t = Table(self.out.csv_rows("memory_record.csv"))
        dev = t.col("Device Type")
        alloc = t.col("Total Allocated(MB)")
        rows = [r for r in t.rows if r[dev].upper().startswith("SIM")]
        self.assertEqual([float(r[alloc]) for r in rows], [1.0, 0.0] * STEPS)

    def test_communication(self):
        with open(self.out.output("communication.json")) as f:
            comm = json.load(f)
        self.assertEqual(sorted(comm), ["step%d" % n for n in range(1, STEPS + 1)])
        for step, kinds in comm.items():
            ops = {k: v for k, v in kinds["collective"].items()
                   if re.search("allreduce", k, re.I) and k.endswith("@tp0")}
            self.assertEqual(len(ops), 1, (step, list(kinds["collective"])))
            info = list(ops.values())[0]["Communication Time Info"]
            self.assertGreaterEqual(info["Elapse Time(ms)"], COLL_US / MS - 0.001)
            self.assertLessEqual(info["Elapse Time(ms)"], (COLL_US + SLACK_US) / MS)


class DeviceWindows(ProfTestCase):
    def test_only_the_recorded_step(self):
        run = self.prof_run([workload("sim_work"), "3"],
                            "--wait", "1", "--active", "1", "--repeat", "1")
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        trace = run.trace()
        steps = [e for e in events(trace, ph="X") if e["name"].startswith("ProfilerStep#")]
        self.assertEqual([e["name"] for e in steps], ["ProfilerStep#2"])
        first, last = span(steps[0])
        kernels = events(trace, ph="X", cat="kernel")
        self.assertEqual(sorted(e["name"] for e in kernels), sorted(TRACE_KERNELS))
        for e in kernels + events(trace, ph="X", cat="gpu_memcpy"):
            s, t = span(e)
            self.assertTrue(first <= s and t <= last, "%r outside step 2" % e)
        t = Table(run.csv_rows("kernel_details.csv"))
        self.assertEqual(len(t.rows), 5)
        self.assertEqual(set(t.values("Step Id")), {"2"})


if __name__ == "__main__":
    unittest.main()
