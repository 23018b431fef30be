"""Which steps record: schedules (torch.profiler.schedule semantics), the
annotation API's start/stop, and --dynamic activations, with a C program so
they are tested without any framework."""
import glob
import json
import os
import time
import subprocess

from proftest import PROF, PYTHON, ProfTestCase, Run, recorded_steps, ticks, workload

import unittest


class Schedules(ProfTestCase):
    def check(self, steps, options, expected, extra=()):
        run = self.prof_run([workload("tx_steps"), str(steps), "1", *extra], *options)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        trace = run.trace()
        self.assertEqual(recorded_steps(trace), expected, run.stderr)
        # nothing of the other steps: each step marks "tick-<n>" once
        self.assertEqual(ticks(trace), expected)
        rows = run.csv_rows("step_trace_time.csv")
        self.assertEqual([int(r[1]) for r in rows[1:]], expected)
        return run

    def test_no_schedule_records_every_step(self):
        self.check(6, [], [1, 2, 3, 4, 5, 6])

    def test_wait_warmup_active_repeat(self):
        self.check(10, ["--wait", "1", "--warmup", "1", "--active", "2", "--repeat", "2"],
                   [3, 4, 7, 8])

    def test_skip_first_one_cycle(self):
        self.check(10, ["--skip-first", "2", "--active", "3", "--repeat", "1"], [3, 4, 5])

    def test_repeat_zero_cycles_forever(self):
        self.check(9, ["--wait", "2", "--active", "1"], [3, 6, 9])

    def test_schedule_from_config_json(self):
        run = self.prof_run([workload("tx_steps"), "8", "1"],
                            env={"PROF_OPTIONS": json.dumps(
                                {"schedule": {"wait": 1, "active": 2}})})
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(recorded_steps(run.trace()), [2, 3, 5, 6, 8])

    def test_start_paused_with_api(self):
        # prof_start when step 4 begins, prof_stop when step 7 begins
        self.check(9, ["--start-paused"], [4, 5, 6], extra=["4", "7"])

    def test_api_and_schedule_both_gate(self):
        # schedule records 2,3 / 5,6 / 8,9; the API window is steps 4..6
        self.check(9, ["--start-paused", "--wait", "1", "--active", "2"], [5, 6], extra=["4", "7"])

    def test_schedule_needs_active(self):
        run = self.prof_run([workload("tx_steps"), "2", "1"], "--wait", "1")
        self.assertEqual(run.rc, 2)
        self.assertIn("schedule.active", run.stderr)


class Dynamic(ProfTestCase):
    def start(self, steps, ms, cmd=None):
        self.dyn = os.path.join(self.tmp, "dyn")
        out = os.path.join(self.tmp, "out")
        self.proc = subprocess.Popen(
            [PROF, "run", "-o", out, "--dynamic", self.dyn, "--"] +
            (cmd or [workload("tx_steps"), str(steps), str(ms)]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.cfg = os.path.join(self.dyn, "profiler_config.json")
        for _ in range(200):
            if os.path.exists(self.cfg):
                break
            time.sleep(0.01)
        with open(self.cfg) as f:
            self.template = json.load(f)
        return out

    def finish(self, out):
        stdout, stderr = self.proc.communicate(timeout=60)
        done = subprocess.CompletedProcess(self.proc.args, self.proc.returncode, stdout, stderr)
        return Run(done, out)

    def log(self):
        with open(os.path.join(self.dyn, "prof_dynamic.log")) as f:
            return f.read()

    def test_template_shape(self):
        out = self.start(5, 1)
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        for key in ("activities", "prof_dir", "analyse", "record_shapes", "profile_memory",
                    "with_stack", "active", "start_step"):
            self.assertIn(key, self.template)
        self.assertEqual(recorded_steps(run.trace()), [], "recorded without an activation")

    def test_edit_activates_exactly_active_steps(self):
        out = self.start(60, 20)
        time.sleep(0.3)
        edit = dict(self.template, active=3)
        with open(self.cfg + ".new", "w") as f:
            json.dump(edit, f)
        os.rename(self.cfg + ".new", self.cfg)
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        steps = recorded_steps(run.trace())
        self.assertEqual(len(steps), 3, steps)
        self.assertEqual(steps, list(range(steps[0], steps[0] + 3)))
        self.assertGreater(steps[0], 2)
        self.assertEqual(ticks(run.trace()), steps)
        self.assertIn("activation 1: recording 3 steps", self.log())

    def test_rank_list_judged_by_each_process(self):
        # two ranks in one run (as under torchrun): rank_list [1] records
        # rank 1's process only; the launcher has no rank of its own (it
        # was the one judged before, and no rank ever recorded)
        tx = workload("tx_steps")
        out = self.start(0, 0, ["sh", "-c", "RANK=0 %s 60 20 & RANK=1 %s 60 20; wait" % (tx, tx)])
        time.sleep(0.3)
        edit = dict(self.template, active=3, is_rank=True, rank_list=[1])
        with open(self.cfg + ".new", "w") as f:
            json.dump(edit, f)
        os.rename(self.cfg + ".new", self.cfg)
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("in the ranks of rank_list", self.log())

        def steps_of(rank):
            with open(run.path("rank_%d" % rank, "PROFILER_OUTPUT", "trace_view.json")) as f:
                return recorded_steps(json.load(f))
        one = steps_of(1)
        self.assertEqual(one, list(range(one[0], one[0] + 3)) if one else [1, 2, 3])
        self.assertEqual(steps_of(0), [])

    def edit(self, **keys):
        with open(self.cfg + ".new", "w") as f:
            json.dump(dict(self.template, **keys), f)
        os.rename(self.cfg + ".new", self.cfg)

    def test_warmup_before_active_steps(self):
        # dynamic_profile's schedule(warmup, active) from start_step: steps
        # 45 and 46 warm up, 47 to 49 record
        out = self.start(70, 20)
        time.sleep(0.3)
        self.edit(active=3, warmup=2, start_step=45)
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(recorded_steps(run.trace()), [47, 48, 49])
        self.assertEqual(ticks(run.trace()), [47, 48, 49])
        self.assertIn("activation 1: recording 3 steps after 2 warm-up steps from step 45",
                      self.log())

    def test_warmup_steps_reported_to_the_hooks(self):
        # what prof's Python hooks read at each step: warm-up (run the
        # collectors, keep nothing), then recording
        script = ("import ctypes, json, time\n"
                  "lib = ctypes.CDLL(None)\n"
                  "lib.prof_fw_state.restype = ctypes.c_uint64\n"
                  "seen = []\n"
                  "for i in range(70):\n"
                  "    seen.append(lib.prof_fw_state() & 3)\n"
                  "    time.sleep(0.02)\n"
                  "    lib.prof_step()\n"
                  "print(json.dumps(seen))\n")
        out = self.start(0, 0, [PYTHON, "-c", script])
        time.sleep(0.3)
        self.edit(active=2, warmup=2, start_step=45)
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        WARMUP, RECORDING = 2, 1
        self.assertEqual(seen[44:48], [WARMUP, WARMUP, RECORDING, RECORDING])
        self.assertEqual([i + 1 for i, f in enumerate(seen) if f], [45, 46, 47, 48])

    def test_experimental_config_checked_as_config_checks_it(self):
        out = self.start(70, 20)
        time.sleep(0.2)
        self.edit(experimental_config={"aic_metrics": "PipeUtilization", "bogus": 1})
        time.sleep(0.25)
        self.edit(active=2, start_step=45, with_flops=True, prof_dir=self.tmp, analyse=True,
                  experimental_config={"aic_metrics": "PipeUtilization",
                                       "profiler_level": "Level1", "l2_cache": False})
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        log = self.log()
        self.assertIn('edit ignored: %s: key "experimental_config.bogus": unknown key' % self.cfg,
                      log)
        self.assertIn("activation 1: recording 2 steps from step 45", log)
        self.assertNotIn("activation 2", log)
        notes = [l.split("note: ", 1)[1] for l in log.splitlines() if "activation 1: note: " in l]
        self.assertEqual([n.split(":")[0] for n in notes],
                         ['key "with_flops"', 'key "experimental_config.aic_metrics"',
                          'key "experimental_config.profiler_level"',
                          "experimental_config profiler_level"])
        self.assertEqual(recorded_steps(run.trace()), [45, 46])
        # "analyse": true gives the activation a result of its own, in prof_dir
        self.assertIn("activation 1: its result goes to %s" % self.tmp, log)
        results = glob.glob(os.path.join(self.tmp, "*_prof", "profiler_info.json"))
        self.assertEqual(len(results), 1, run.stderr)
        with open(results[0]) as f:
            window = json.load(f)["window"]
        self.assertEqual((window["steps"], window["requested_by"]),
                         ([45, 46], "dynamic activation 1"))
        self.assertIn("prof: 1 window result written", run.stderr)

    def test_invalid_edit_is_logged_and_ignored(self):
        out = self.start(60, 10)
        time.sleep(0.1)
        with open(self.cfg, "w") as f:
            f.write('{"active": "three"')
        time.sleep(0.25)
        with open(self.cfg, "w") as f:
            json.dump(dict(self.template, active=0), f)
        run = self.finish(out)
        self.assertEqual(run.rc, 0, run.stderr)
        log = self.log()
        self.assertIn("edit ignored", log)
        self.assertIn("invalid JSON", log)
        self.assertIn('"active": must be at least 1', log)
        self.assertEqual(recorded_steps(run.trace()), [])


if __name__ == "__main__":
    unittest.main()
