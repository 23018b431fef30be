"""The torch-style in-script profiler (share/prof/python/prof, issue 19):
prof.profile with a schedule and on_trace_ready, in a plain python (prof
session) and under prof run; a result per window parsed in the background
(also prof run --cycle-results); export_chrome_trace, export_stacks; the
errors a user can make."""
import csv
import glob
import json
import os
import re
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import BUILD, PROF, PYTHON, SRC, ProfTestCase, plain_python_env, workload  # noqa: E402

PYDIR = os.path.join(BUILD, "share", "prof", "python")
SCRIPT = os.path.join(SRC, "test", "workloads", "torch_inscript.py")


def read_text(path):
    with open(path) as f:
        return f.read()


def steps_of(result):
    with open(os.path.join(result, "PROFILER_OUTPUT", "step_trace_time.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    return [int(r["Step"]) for r in rows]


def op_names(result):
    with open(os.path.join(result, "PROFILER_OUTPUT", "operator_details.csv"), newline="") as f:
        return [r["Name"] for r in csv.DictReader(f)]


class InScript(ProfTestCase):
    def plain(self, *args, env=None, timeout=120):
        e = plain_python_env(PYDIR)
        e.update(env or {})
        return subprocess.run([PYTHON, SCRIPT, *args], capture_output=True, text=True, env=e,
                              timeout=timeout, cwd=self.tmp)

    def results(self, out):
        """The window result directories under `out`, in window order."""
        found = []
        for d in glob.glob(os.path.join(out, "*_prof")):
            info = os.path.join(d, "profiler_info.json")
            if os.path.exists(os.path.join(d, "PROFILER_OUTPUT", "parse.done")):
                with open(info) as f:
                    found.append((json.load(f)["window"]["window"], d))
        return [d for _, d in sorted(found)]

    def check_windows(self, out, expect):
        res = self.results(out)
        self.assertEqual([steps_of(d) for d in res], expect)
        for d in res:
            # each window holds its own steps' operators: 2 Linear layers a step
            self.assertEqual(op_names(d).count("aten::addmm"), 2 * len(steps_of(d)), d)
            with open(os.path.join(d, "profiler_info.json")) as f:
                w = json.load(f)["window"]
            self.assertEqual(w["steps"], [steps_of(d)[0], steps_of(d)[-1]])
            self.assertIn("tensorboard_trace_handler", w["requested_by"])

    def test_plain_python_schedule_gives_a_result_per_cycle(self):
        out = os.path.join(self.tmp, "tb")
        p = self.plain(out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("steps 10 windows 2", p.stdout)
        # wait=1 warmup=1 active=2 repeat=2, steps numbered from 1
        self.check_windows(out, [[3, 4], [7, 8]])
        self.assertIn("prof: 2 window results written", p.stderr)
        # the whole run's raw data stays for prof parse, and says so
        self.assertIn("analyse it with `prof parse", p.stderr)

    def test_under_prof_run_one_recorder(self):
        out = os.path.join(self.tmp, "tb")
        run = self.prof_run([PYTHON, SCRIPT, out])
        self.assertEqual(run.rc, 0, run.stderr)
        self.check_windows(out, [[3, 4], [7, 8]])
        # the launcher's own output holds exactly the script's windows
        self.assertEqual(steps_of(run.run_dir), [3, 4, 7, 8])

    def test_window_outputs_follow_export_type_and_the_run_options(self):
        out = os.path.join(self.tmp, "tb")
        p = self.plain(out, "--schedule", "0,0,2,1,0", "--workers", "0", "--export-type", "db")
        self.assertEqual(p.returncode, 0, p.stderr)
        res = glob.glob(os.path.join(out, "*_prof", "PROFILER_OUTPUT"))
        self.assertEqual(len(res), 1, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(res[0], "profiler.db")))
        self.assertFalse(os.path.exists(os.path.join(res[0], "trace_view.json")))
        # under prof run, the run's own pretty applies to each window too
        out = os.path.join(self.tmp, "tb2")
        run = self.prof_run([PYTHON, SCRIPT, out, "--schedule", "0,0,2,1,0", "--workers", "0"],
                            env={"PROF_OPTIONS": '{"pretty": true}'})
        self.assertEqual(run.rc, 0, run.stderr)
        res = glob.glob(os.path.join(out, "*_prof", "PROFILER_OUTPUT", "trace_view.json"))
        self.assertEqual(len(res), 1, run.stderr)
        with open(res[0]) as f:
            self.assertIn('\n      "ph": ', f.read(4096))   # one key a line

    def test_torch_schedule_object_and_skip_first(self):
        out = os.path.join(self.tmp, "tb")
        p = self.plain(out, "--schedule", "torch:1,0,1,0,2", "--steps", "8")
        self.assertEqual(p.returncode, 0, p.stderr)
        # skip 2, then cycles of wait 1 + active 1, repeat 0: steps 4, 6, 8
        self.check_windows(out, [[4], [6], [8]])

    def test_no_schedule_one_window_at_stop(self):
        out = os.path.join(self.tmp, "tb")
        p = self.plain(out, "--schedule", "none", "--steps", "5", "--workers", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_windows(out, [[1, 2, 3, 4, 5]])

    def test_export_chrome_trace_and_stacks(self):
        stacks = os.path.join(self.tmp, "st.folded")
        p = self.plain(self.tmp, "--handler", "export", "--with-stack", "--stacks", stacks,
                       "--schedule", "1,0,2,1,0", "--workers", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.tmp, "trace_1.json")) as f:
            trace = json.load(f)
        names = {e.get("name") for e in trace["traceEvents"]}
        self.assertEqual(sorted(n for n in names if n and n.startswith("ProfilerStep")),
                         ["ProfilerStep#2", "ProfilerStep#3"])
        self.assertIn("aten::addmm", names)
        with open(stacks) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines)
        addmm = [l for l in lines if ";aten::addmm " in l]
        self.assertTrue(addmm, lines[:5])
        # outermost frame first: the script's own line, then torch's
        self.assertTrue(all(l.startswith("torch_inscript.py(") for l in addmm), addmm[:2])
        self.assertTrue(all(int(l.rsplit(" ", 1)[1]) >= 0 for l in lines))

    def test_prof_tx_imported_first_is_bound(self):
        out = os.path.join(self.tmp, "tb")
        p = self.plain(out, "--tx-first", "--schedule", "0,0,2,1,0", "--workers", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        res = self.results(out)
        self.assertEqual(len(res), 1)
        with open(os.path.join(res[0], "PROFILER_OUTPUT", "trace_view.json")) as f:
            trace = json.load(f)
        self.assertEqual(sum(e.get("name") == "train_step" for e in trace["traceEvents"]), 2)


class DynamicProfile(ProfTestCase):
    def test_plain_python_dynamic_profile(self):
        d = os.path.join(self.tmp, "dyn")
        e = plain_python_env(PYDIR)
        p = subprocess.run([PYTHON, os.path.join(SRC, "test", "workloads", "dynamic_inscript.py"),
                            d], capture_output=True, text=True, env=e, cwd=self.tmp, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "prof_dynamic.log")) as f:
            self.assertIn("activation 1: recording 2 steps", f.read())
        dirs = glob.glob(os.path.join(self.tmp, "prof_data", "*_prof"))
        runs = [d for d in dirs if os.path.isdir(os.path.join(d, "windows"))]
        self.assertEqual(len(runs), 1, p.stderr)
        # edited during step 3: the next two steps record
        self.assertEqual(steps_of(runs[0]), [4, 5])
        # the template's "analyse": true: the activation's own result, in prof_dir
        results = [d for d in dirs if d not in runs]
        self.assertEqual([steps_of(d) for d in results], [[4, 5]])
        self.assertIn("prof: 1 window result written", p.stderr)

    def test_under_prof_run_without_dynamic_refused(self):
        d = os.path.join(self.tmp, "dyn")
        run = self.prof_run([PYTHON, "-c", "from prof import dynamic_profile as dp\n"
                             "dp.init(%r)" % d])
        self.assertNotEqual(run.rc, 0)
        self.assertIn("without --dynamic; run it as `prof run --dynamic", run.stderr)


class CudaAttach(ProfTestCase):
    """A CUDA initialised before the object starts is attached then (the
    stand-in libcupti, mapped as torch maps its own, and a library mapped
    under libcuda's name: what a CUDA program has once cuInit ran)."""

    def test_cuda_initialised_before_is_attached(self):
        fake = os.path.join(BUILD, "test", "unit", "libcupti-fake.so")
        if not os.path.exists(fake):
            self.skipTest("built without the CUPTI headers")
        cuda = os.path.join(self.tmp, "libcuda.so.1")
        with open(fake, "rb") as f, open(cuda, "wb") as g:
            g.write(f.read())
        code = ("import ctypes\n"
                "ctypes.CDLL(%r, mode=ctypes.RTLD_GLOBAL)\nctypes.CDLL(%r)\n"
                "import prof\n"
                "with prof.profile(activities=[prof.ProfilerActivity.CPU,"
                " prof.ProfilerActivity.CUDA]) as p:\n    p.step()\n"
                "print(p._rt.run_dir)\n" % (fake, cuda))
        e = plain_python_env(PYDIR)
        e["FAKE_CUPTI_DEVICE_MADE"] = "1"   # its DEVICE record went to no one
        p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=e,
                           cwd=self.tmp, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        run_dir = p.stdout.strip().splitlines()[-1]
        log = ""
        for path in glob.glob(os.path.join(run_dir, "logs", "agent-*.log")):
            with open(path) as f:
                log += f.read()
        self.assertIn("cuda: tracing with CUPTI", log)
        self.assertIn("libcupti-fake.so", log)
        # the device's properties, which CUPTI gives a late subscriber only
        # when asked (a real H200 said 0 SMs without)
        with open(os.path.join(run_dir, "PROFILER_OUTPUT", "trace_view.json")) as f:
            props = json.load(f).get("deviceProperties")
        self.assertEqual([(d["name"], d["numSms"]) for d in props or []], [("Fake GPU", 132)])


class Errors(ProfTestCase):
    def run_py(self, code):
        e = plain_python_env(PYDIR)
        return subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=e,
                              cwd=self.tmp, timeout=60)

    def test_bad_arguments(self):
        cases = {
            "prof.schedule(wait=1, active=0)": "active",
            "prof.schedule(wait=-1, active=1)": "wait",
            "prof.profile(activities=['CPU'])": "activities",
            "prof.profile(schedule=lambda s: None)": "schedule",
            "prof.ExperimentalConfig(export_type=['csv'])": "export_type",
            "prof.ExperimentalConfig(profiler_level='Level9')": "profiler_level",
            "prof.ExperimentalConfig(mstx_domain_include=['a'], mstx_domain_exclude=['b'])":
                "mstx_domain",
        }
        for expr, key in cases.items():
            p = self.run_py("import prof\n%s" % expr)
            self.assertNotEqual(p.returncode, 0, expr)
            self.assertIn("ValueError", p.stderr, expr)
            self.assertIn(key, p.stderr.splitlines()[-1], expr)

    def test_processes_started_before_are_said(self):
        p = self.run_py("import subprocess, prof\n"
                        "s = subprocess.Popen(['sleep', '30'])\n"
                        "with prof.profile():\n    pass\n"
                        "print('child', s.pid)\ns.kill()\ns.wait()\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        pid = p.stdout.split()[-1]
        self.assertIn("prof: 1 process started before the profiler (pid %s) is not recorded"
                      % pid, p.stderr)

    def test_start_twice(self):
        p = self.run_py("import prof\np = prof.profile()\np.start()\np.start()")
        self.assertIn("RuntimeError: prof.profile: start() called twice", p.stderr)
        p = self.run_py("import prof.paddle\np = prof.paddle.Profiler()\np.start()\np.start()")
        self.assertIn("RuntimeError: prof.paddle.Profiler: start() called twice", p.stderr)

    def test_npu_activity_is_the_device_and_hardware_keys_are_named(self):
        p = self.run_py("import prof\n"
                        "assert prof.ProfilerActivity.NPU is prof.ProfilerActivity.CUDA\n"
                        "assert prof.ProfilerActivity.GPU is prof.ProfilerActivity.CUDA\n"
                        "c = prof.ExperimentalConfig(aic_metrics=prof.AiCMetrics.PipeUtilization,"
                        " l2_cache=True)\n"
                        "with prof.profile(experimental_config=c, with_flops=True): pass\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        for key in ("aic_metrics", "l2_cache"):
            self.assertIn("prof: experimental_config %s: not applied" % key, p.stderr)
        self.assertNotIn("with_flops", p.stderr)   # FLOPs are counted


class CycleResults(ProfTestCase):
    def test_launcher_schedule_cycles(self):
        run = self.prof_run([os.path.join(BUILD, "examples", "train_demo")],
                            "--wait", "1", "--active", "2", "--repeat", "2", "--cycle-results")
        self.assertEqual(run.rc, 0, run.stderr)
        res = sorted(glob.glob(run.path("cycles", "*_prof")),
                     key=lambda d: steps_of(d)[0] if steps_of(d) else 0)
        self.assertEqual([steps_of(d) for d in res], [[2, 3], [5, 6]])
        self.assertIn("prof: 2 window results written", run.stderr)
        for d in res:
            with open(os.path.join(d, "profiler_info.json")) as f:
                self.assertEqual(json.load(f)["window"]["requested_by"], "schedule cycle")

    def test_ctrl_c_skips_the_results_left(self):
        # 200 one-step windows of a program that ends at once: their parses
        # are still queued when it has ended, prof says so, and the user's
        # SIGINT then skips them; the run's own parse is whole all the same.
        # The SIGINT waits for prof's word, as a user does: one sent as the
        # program ends, before prof has reaped it, is still the program's.
        out = os.path.join(self.tmp, "out")
        p = subprocess.Popen([PROF, "run", "-o", out, "--sampling-interval", "0", "--wait", "1",
                              "--active", "1", "--repeat", "0", "--cycle-results", "--",
                              workload("tx_steps"), "400", "0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            err = ""
            while "; Ctrl-C skips them" not in err:
                line = p.stderr.readline()
                self.assertTrue(line, "prof never said that Ctrl-C skips the windows left:\n" + err)
                err += line
            (run_dir,) = glob.glob(os.path.join(out, "*_prof"))
            os.kill(p.pid, signal.SIGINT)
            err += p.communicate(timeout=120)[1]
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 0, err)
        self.assertRegex(err, r"prof: skipping the \d+ window results? left")
        m = re.search(r"prof: (\d+) window results? skipped at Ctrl-C \(the requests? stays? in "
                      r"\S+/windows\)", err)
        self.assertTrue(m, err)
        written = re.search(r"prof: (\d+) window results? written", err)
        done = glob.glob(os.path.join(run_dir, "windows", "*.done"))
        skipped = [d for d in done if "skipped at the user's Ctrl-C" in read_text(d)]
        self.assertEqual(len(skipped), int(m.group(1)))
        self.assertEqual(len(done), 200)   # each request has its outcome
        self.assertEqual(int(m.group(1)) + (int(written.group(1)) if written else 0), 200, err)
        with open(os.path.join(run_dir, "PROFILER_OUTPUT", "step_trace_time.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 1 + 200)   # the recorded steps


if __name__ == "__main__":
    unittest.main()
