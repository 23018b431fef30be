"""The CUDA path end to end without a GPU: `prof run` on fake_cuda_app,
whose CUPTI is the stand-in (fake_cupti.c). What is checked is prof's
part: the launcher's injection variables, the agent's backend started by
the injection entry, CUPTI records through the HAL and the sink into
dev.raw, and the parse's outputs (kernels with readable names, launches
joined to kernels by ac2g flows, copies, syncs (event syncs naming the
event record they waited for, as HTA's critical path reads them), NVTX ranges, an NCCL
collective once, noise left out, CUPTI's losses counted). Whether a real
CUPTI delivers such records is test/gpu's business.

Run by ctest as e2e.test_cuda_fake (test/unit/cuda/cuda_tests.cmake)."""
import collections
import glob
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
from proftest import PROF, ProfTestCase, Run, events  # noqa: E402

APP = os.environ.get("PROF_FAKE_CUDA_APP", "")
FAKE = os.environ.get("PROF_FAKE_CUPTI", "")
TX = os.environ.get("PROF_TX_LIB", "")
STEPS = 4
KERNEL = "void at::native::vectorized_elementwise_kernel<4>(int, 4)"


def dict_rows(run, name):
    head, *rows = run.csv_rows(name)
    return [dict(zip(head, r)) for r in rows]


class FakeCudaTest(ProfTestCase):
    @classmethod
    def setUpClass(cls):
        if not (APP and FAKE):
            raise unittest.SkipTest("PROF_FAKE_CUDA_APP / PROF_FAKE_CUPTI not set")

    def run_app(self, *flags, tx=False, env=None):
        out = os.path.join(self.tmp, "out")
        proc = subprocess.run([PROF, "run", "-o", out, *flags, "--", APP, FAKE, str(STEPS)]
                              + ([TX] if tx else []),
                              capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, **(env or {})))
        run = Run(proc, out)
        self.assertEqual(run.rc, 0, run.stderr)
        return run

    def agent_log(self, run):
        text = ""
        for p in glob.glob(run.path("logs", "agent-*.log")):
            with open(p) as f:
                text += f.read()
        return text

    def test_outputs(self):
        run = self.run_app()
        log = self.agent_log(run)
        self.assertIn("cuda: tracing with CUPTI 130001", log)
        self.assertIn("device backend cuda: started", log)
        t = run.trace()
        kernels = collections.Counter(e["name"] for e in events(t, "X", "kernel"))
        self.assertEqual(kernels[KERNEL], STEPS, kernels)
        self.assertEqual(kernels["triton_poi_fused_add_0"], STEPS, kernels)
        nccl = [e for e in events(t, "X", "kernel") if e["name"].startswith("ncclDevKernel_")]
        self.assertEqual(len(nccl), STEPS, "an NCCL kernel is one event, not two")
        self.assertTrue(all(e["args"].get("Collective name") == "allgather" for e in nccl))
        k = events(t, "X", "kernel", KERNEL)[0]
        self.assertEqual(k["args"]["grid"], [64, 1, 1])
        self.assertEqual(k["args"]["block"], [256, 1, 1])
        self.assertEqual(k["args"]["registers per thread"], 40)

        runtime = collections.Counter(e["name"] for e in events(t, "X", "cuda_runtime"))
        self.assertEqual(runtime["cudaLaunchKernel"], 2 * STEPS, runtime)
        self.assertEqual(runtime["cudaMemcpyAsync"], STEPS, runtime)
        self.assertNotIn("cudaGetDevice", runtime)
        driver = events(t, "X", "cuda_driver", "cuLaunchKernel")
        self.assertEqual(len(driver), STEPS)
        # the driver launches came from another thread: its own OS tid
        main_tid = events(t, "X", "cuda_runtime", "cudaLaunchKernel")[0]["tid"]
        self.assertTrue(all(e["tid"] != main_tid for e in driver))
        # a thread that records nothing but CUDA calls, named by the device stream
        names = {(e["pid"], e["tid"]): e["args"]["name"] for e in t["traceEvents"]
                 if e.get("ph") == "M" and e.get("name") == "thread_name"}
        self.assertIn("fake_launcher", names.get((driver[0]["pid"], driver[0]["tid"]), ""), names)

        starts = {e["id"] for e in events(t, "s", "ac2g")}
        ends = {e["id"] for e in events(t, "f", "ac2g")}
        self.assertGreaterEqual(len(starts & ends), 4 * STEPS)   # launch, copy, nccl, driver

        copies = events(t, "X", "gpu_memcpy")
        self.assertEqual([e["name"] for e in copies], ["Memcpy HtoD (Pinned -> Device)"] * STEPS)
        self.assertEqual(len(events(t, "X", "cuda_sync", "Stream Sync")), STEPS)
        self.check_event_syncs(t)
        ranges = events(t, "X", "user_annotation", "train_step")
        self.assertEqual(len(ranges), STEPS)
        self.assertTrue(all(abs(float(e["dur"]) - 120.0) < 0.01 for e in ranges))
        self.assertEqual(ranges[0]["tid"], main_tid)
        # threads by OS id: the main thread's is the pid
        self.assertEqual(main_tid, ranges[0]["pid"])
        # a graph replay's kernels, all joined to the one launch by its correlation
        graph = [e for e in events(t, "X", "kernel") if e["name"].startswith("graph_k")]
        self.assertEqual(len(graph), 2 * STEPS)
        launches = {e["args"]["correlation"] for e in events(t, "X", "cuda_runtime", "cudaGraphLaunch")}
        self.assertEqual(len(launches), STEPS)
        self.assertTrue(all(e["args"]["correlation"] in launches for e in graph), graph[:2])

        props = t.get("deviceProperties", [])
        self.assertTrue(any(p["name"] == "Fake GPU" and p["numSms"] == 132 for p in props), props)
        rows = run.csv_rows("kernel_details.csv")
        self.assertGreaterEqual(len(rows) - 1, 4 * STEPS)
        info = run.json("profiler_info.json")
        self.assertGreaterEqual(info["end_info"]["lost"], 5)   # CUPTI's drops

    def check_event_syncs(self, t):
        # Kineto's args: the stream the event was recorded on and the
        # correlation of that step's cudaEventRecord (the event is reused)
        records = sorted(e["args"]["correlation"]
                         for e in events(t, "X", "cuda_runtime", "cudaEventRecord"))
        self.assertEqual(len(records), STEPS)
        for name, stream in (("Stream Wait Event", 9), ("Event Sync", -1)):
            syncs = sorted(events(t, "X", "cuda_sync", name), key=lambda e: e["args"]["correlation"])
            self.assertEqual(len(syncs), STEPS, name)
            for rec, e in zip(records, syncs):
                a = e["args"]
                self.assertEqual(a["cuda_sync_kind"], name)
                self.assertEqual(a["stream"], stream, e)
                self.assertEqual(a["wait_on_stream"], 7, e)
                self.assertEqual(a["wait_on_cuda_event_record_corr_id"], rec, e)
                self.assertEqual(a["wait_on_cuda_event_id"], 500, e)
                self.assertLess(rec, a["correlation"])
        for e in events(t, "X", "cuda_sync", "Stream Sync"):
            self.assertNotIn("wait_on_stream", e["args"])

    def test_gpu_user_annotation(self):
        # Kineto's shape: per user range and stream, on the device's pid and
        # the stream's tid, from the first to the last task the range's
        # launches ran; not for the driver thread's launch (outside it)
        if not TX:
            self.skipTest("PROF_TX_LIB not set")
        t = self.run_app(tx=True).trace()
        ranges = events(t, "X", "user_annotation", "fake_step")
        self.assertEqual(len(ranges), STEPS)
        ann = events(t, "X", "gpu_user_annotation", "fake_step")
        by_stream = collections.defaultdict(list)
        for a in ann:
            by_stream[a["tid"]].append(a)
        self.assertEqual(sorted(by_stream), [7, 8], ann[:3])
        self.assertTrue(all(len(v) == STEPS for v in by_stream.values()), by_stream)
        kernels = [e for e in events(t, "X", "kernel") if e["tid"] == 7]
        for a in by_stream[7]:
            inside = [k for k in kernels
                      if a["ts"] <= k["ts"] and k["ts"] + k["dur"] <= a["ts"] + a["dur"] + 0.001]
            # the step's elementwise kernel, then the graph's two: 10 to 102 us
            self.assertEqual(len(inside), 3, (a, inside))
            self.assertAlmostEqual(float(a["dur"]), 92.0, delta=0.01)
            self.assertEqual(a["pid"], kernels[0]["pid"])

    def test_torch_op_ranges(self):
        # torch's NVTX ranges of operators (prof's operators on a GPU with
        # PROF_OPS_NVTX, or a script's emit_nvtx) are operators: named by
        # the op, with their shapes, nested, joined to the kernels they
        # launched; the backward's know their forward thread by sequence
        # number. They are not shown as NVTX ranges.
        run = self.run_app(env={"FAKE_TORCH_OPS": "1"})
        t = run.trace()
        main_tid = events(t, "X", "user_annotation", "train_step")[0]["tid"]
        # record_function's ranges are annotations (NVTX carries no
        # scope: by name); the DataLoader's is prof's own span, left out
        self.assertEqual(collections.Counter(e["name"] for e in events(t, "X", "user_annotation")),
                         {"train_step": STEPS, "Optimizer.step#SGD.step": STEPS})
        ops = events(t, "X", "cpu_op")
        names = collections.Counter(e["name"] for e in ops)
        evaluate = "autograd::engine::evaluate_function: AddmmBackward0"
        self.assertEqual(names, {"aten::addmm": STEPS, "aten::mm": STEPS, "aten::add_": STEPS,
                                 "AddmmBackward0": STEPS, evaluate: STEPS}, names)
        seqs = set()
        for e in ops:
            a = e["args"]
            forward = e["name"] in ("aten::addmm", "aten::add_")
            self.assertEqual(e["tid"] == main_tid, forward, e)
            if e["name"] == "aten::addmm":
                self.assertEqual(a["Input Dims"], [[8], [4, 8], [8, 8]])
                seqs.add(a["Sequence number"])
            if e["name"] in ("AddmmBackward0", evaluate):
                self.assertEqual(a["Fwd thread id"], main_tid, e)
            if e["name"] == "aten::mm":
                self.assertNotIn("Sequence number", a)
                self.assertNotIn("Fwd thread id", a)
        self.assertEqual(seqs, {100 + i for i in range(STEPS)})
        stat = {r["OP Type"]: r for r in dict_rows(run, "op_statistic.csv")
                if r["Core Type"] == "CPU"}
        self.assertEqual(sorted(stat), sorted(list(names) + ["Optimizer.step#SGD.step"]))
        self.assertEqual(stat["aten::addmm"]["Count"], str(STEPS))
        self.assertEqual(stat["aten::addmm"]["Total Time(us)"], "%.3f" % (7 * STEPS))
        # device time: addmm launched the 25 us elementwise kernel, mm the
        # driver thread's 10 us one
        details = collections.defaultdict(set)
        for r in dict_rows(run, "operator_details.csv"):
            details[r["Name"]].add((r["Input Shapes"], r["Device Total Duration(us)"]))
        self.assertEqual(details["aten::addmm"], {("[[8], [4, 8], [8, 8]]", "25.000")})
        self.assertEqual(details["aten::mm"], {("", "10.000")})
        self.assertEqual(details[evaluate], {("", "10.000")})

    def nvtx_app(self, env=None):
        run = self.run_app(env=dict({"FAKE_TORCH_OPS": "nvtx"}, **(env or {})))
        if "built without nvtx3" in run.stderr:
            self.skipTest("fake_cuda_app was built without nvtx3's headers")
        self.assertNotIn("no NVTX operators", run.stderr)
        return run

    def check_nvtx_ops(self, run, died_in_op=True):
        """What torch's operator ranges, made through NVTX by the program,
        come out as, whichever way they reached prof."""
        t = run.trace()
        main_tid = events(t, "X", "user_annotation", "train_step")[0]["tid"]
        # the program's own NVTX range is an annotation; record_function's
        # too; the DataLoader's is prof's own span, left out
        self.assertEqual(collections.Counter(e["name"] for e in events(t, "X", "user_annotation")),
                         {"train_step": STEPS, "user_forward": STEPS,
                          "Optimizer.step#SGD.step": STEPS})
        ops = events(t, "X", "cpu_op")
        names = collections.Counter(e["name"] for e in ops)
        evaluate = "autograd::engine::evaluate_function: AddmmBackward0"
        self.assertEqual(names, {"aten::addmm": STEPS, "aten::mm": STEPS, "aten::add_": STEPS,
                                 "AddmmBackward0": STEPS, evaluate: STEPS,
                                 **({"aten::cross_entropy_loss": 1} if died_in_op else {})},
                         names)
        backward_tids = set()
        for e in ops:
            a = e["args"]
            forward = e["name"] in ("aten::addmm", "aten::add_", "aten::cross_entropy_loss")
            self.assertEqual(e["tid"] == main_tid, forward, e)
            if e["name"] == "aten::addmm":
                self.assertEqual(a["Input Dims"], [[8], [4, 8], [8, 8]])
            if e["name"] in ("AddmmBackward0", evaluate):
                self.assertEqual(a["Fwd thread id"], main_tid, e)
                backward_tids.add(e["tid"])
        self.assertEqual(len(backward_tids), STEPS)   # a thread each step, as the app makes
        # each launch inside its op: device time by the kernels they launched
        details = collections.defaultdict(set)
        for r in dict_rows(run, "operator_details.csv"):
            details[r["Name"]].add((r["Input Shapes"], r["Device Total Duration(us)"]))
        self.assertEqual(details["aten::addmm"], {("[[8], [4, 8], [8, 8]]", "25.000")})
        self.assertEqual(details["aten::add_"], {("", "4.000")})
        self.assertEqual(details["Optimizer.step#SGD.step"], {("", "4.000")})
        self.assertEqual(details["aten::mm"], {("", "10.000")})
        self.assertEqual(details[evaluate], {("", "10.000")})
        if died_in_op:   # it ends with its process's last record
            loss = [e for e in ops if e["name"] == "aten::cross_entropy_loss"][0]
            self.assertGreaterEqual(float(loss["dur"]), 50.0, loss)

    def test_torch_op_ranges_at_the_call(self):
        # torch's NVTX ranges, as torch's observer makes them through NVTX:
        # prof's hook takes them at the call (operators in the thread's own
        # stream), the program's other ranges go on to CUPTI
        run = self.nvtx_app()
        log = self.agent_log(run)
        self.assertIn("cuda: %d operators from torch's NVTX ranges (%d at the NVTX call, "
                      "0 through CUPTI)" % (6 * STEPS + 1, 6 * STEPS + 1), log)
        self.check_nvtx_ops(run)

    def test_torch_op_ranges_via_cupti(self):
        # PROF_NVTX_VIA_CUPTI=1: the same ranges all go to CUPTI, as before
        # the hook; the same operators come out (but the one left open at
        # exit: CUPTI never records its end)
        run = self.run_app(env={"FAKE_TORCH_OPS": "nvtx", "PROF_NVTX_VIA_CUPTI": "1"})
        if "built without nvtx3" in run.stderr:
            self.skipTest("fake_cuda_app was built without nvtx3's headers")
        log = self.agent_log(run)
        self.assertIn("go through CUPTI: PROF_NVTX_VIA_CUPTI=1", log)
        # (the converter counts the DataLoader's range, which the parse leaves out)
        self.assertIn("(0 at the NVTX call, %d through CUPTI)" % (7 * STEPS), log)
        self.check_nvtx_ops(run, died_in_op=False)

    def test_injection_env(self):
        out = os.path.join(self.tmp, "env")
        proc = subprocess.run([PROF, "run", "-o", out, "--no-parse", "--", "sh", "-c",
                               "echo $CUDA_INJECTION64_PATH; echo $NVTX_INJECTION64_PATH"],
                              capture_output=True, text=True, timeout=60)
        lines = proc.stdout.split()
        self.assertEqual(len(lines), 2, proc.stdout)
        self.assertTrue(lines[0].endswith("/libprof_agent.so") and lines[0] == lines[1])
        env = dict(os.environ, CUDA_INJECTION64_PATH="/opt/nsys/libToolsInjection64.so")
        proc = subprocess.run([PROF, "run", "-o", out, "--no-parse", "--", "sh", "-c",
                               "echo $CUDA_INJECTION64_PATH; echo x$NVTX_INJECTION64_PATH"],
                              capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(proc.stdout.split(), ["/opt/nsys/libToolsInjection64.so", "x"])
        self.assertIn("CUDA_INJECTION64_PATH is set", proc.stderr)
        # "none" is the usual spelling of "unset": replaced, once
        env = dict(os.environ, CUDA_INJECTION64_PATH="none", NVTX_INJECTION64_PATH="")
        proc = subprocess.run([PROF, "run", "-o", out, "--no-parse", "--", "sh", "-c",
                               "env | grep _INJECTION64_PATH= | sort"],
                              capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(len(proc.stdout.split()), 2, proc.stdout)
        self.assertTrue(all(v.endswith("/libprof_agent.so") for v in proc.stdout.split()))
        # without device activity too: the agent then holds CUPTI, tracing nothing
        proc = subprocess.run([PROF, "run", "-o", out, "--no-parse", "--activities", "CPU", "--",
                               "sh", "-c", "echo x$CUDA_INJECTION64_PATH"],
                              capture_output=True, text=True, timeout=60)
        self.assertTrue(proc.stdout.strip().endswith("/libprof_agent.so"), proc.stdout)

    def test_cpu_only_holds_cupti(self):
        # Kineto (torch's profiler, which prof runs for the operators) must
        # find CUPTI taken and stay CPU-only; no CUDA activity is recorded
        # (PROF_OPS_NVTX=0: operators never through torch's NVTX ranges).
        run = self.run_app("--activities", "CPU", env={"PROF_OPS_NVTX": "0"})
        self.assertIn("CUPTI held so that torch's profiler records CPU operators only",
                      self.agent_log(run))
        self.assertNotIn("tracing with CUPTI", self.agent_log(run))
        t = run.trace()
        self.assertEqual(events(t, "X", "kernel"), [])
        self.assertEqual(events(t, "X", "cuda_runtime"), [])

    def test_cpu_only_nvtx_operators(self):
        # --activities CPU (PROF_OPS_NVTX unset, the default): CUPTI traces
        # NVTX alone, so torch's operator ranges still reach prof; no
        # device activity
        run = self.run_app("--activities", "CPU", env={"FAKE_TORCH_OPS": "1"})
        log = self.agent_log(run)
        self.assertIn("cuda: tracing NVTX alone (no device activity) with CUPTI", log)
        t = run.trace()
        self.assertEqual(events(t, "X", "kernel"), [])
        self.assertEqual(events(t, "X", "cuda_runtime"), [])
        self.assertEqual(events(t, "X", "gpu_memcpy"), [])
        names = collections.Counter(e["name"] for e in events(t, "X", "cpu_op"))
        self.assertEqual(names["aten::addmm"], STEPS, names)
        self.assertEqual(len(events(t, "X", "user_annotation", "train_step")), STEPS)
        # msprof_tx false: NVTX is not the run's to trace; CUPTI only held
        cfg = os.path.join(self.tmp, "tx.json")
        with open(cfg, "w") as f:
            f.write('{"experimental_config": {"msprof_tx": false}}')
        run = self.run_app("--activities", "CPU", "--config", cfg,
                           env={"PROF_OPS_NVTX": "1", "FAKE_TORCH_OPS": "1"})
        self.assertIn("CUPTI held so that torch's profiler records CPU operators only",
                      self.agent_log(run))
        self.assertEqual(events(run.trace(), "X", "cpu_op"), [])

    def test_window_closed(self):
        # Nothing recorded (--start-paused, no prof_start): no device records.
        run = self.run_app("--start-paused")
        t = run.trace()
        self.assertEqual(events(t, "X", "kernel"), [])
        self.assertEqual(events(t, "X", "cuda_runtime"), [])

    def test_msprof_tx_false_leaves_nvtx_out(self):
        # NVTX ranges are the program's own marks: msprof_tx false does not
        # trace them (CUPTI's MARKER kind stays off); the kernels still are.
        cfg = os.path.join(self.tmp, "tx.json")
        with open(cfg, "w") as f:
            f.write('{"experimental_config": {"msprof_tx": false}}')
        t = self.run_app("--config", cfg).trace()
        self.assertEqual(events(t, "X", "user_annotation", "train_step"), [])
        self.assertEqual(len(events(t, "X", "kernel", KERNEL)), STEPS)


if __name__ == "__main__":
    unittest.main()
