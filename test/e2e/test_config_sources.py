"""The seeds' configuration sources under `prof run`: torch_npu's
profiler_config.json as --config (the template exactly as the seed prints
it), MindSpore's MS_PROFILER_OPTIONS (the seed's example), their order
among prof's own sources, each key's effect in a run, the one-line notes
for keys that cannot act here, is_rank/rank_list in a static run, and an
exit 2 naming the key and the source, before launch, for every bad value."""
import glob
import json
import os
import subprocess
import unittest

from proftest import PROF, ProfTestCase, Run, recorded_steps, ticks, workload

# torch_npu's profiler_config.json, as the seed (001) prints it.
SEED_TEMPLATE = """{
    "activities": ["CPU", "NPU"],
    "prof_dir": "./",
    "analyse": false,
    "record_shapes": false,
    "profile_memory": false,
    "with_stack": false,
    "with_flops": false,
    "with_modules": false,
    "active": 1,
    "experimental_config": {
        "profiler_level": "Level0",
        "aic_metrics": "AiCoreNone",
        "l2_cache": false,
        "op_attr": false,
        "data_simplification": true,
        "record_op_args": false,
        "export_type": "text",
        "msprof_tx": false
    }
}
"""

# MS_PROFILER_OPTIONS, the seed's (003) example; output_path is set per test.
SEED_MS = {"start": True, "output_path": "/XXX", "memory": False, "hccl": False,
           "aicore_metrics": 0, "l2_cache": False}


def notes(stderr):
    return [l for l in stderr.splitlines() if l.startswith("prof: note: ")]


class Sources(ProfTestCase):
    def prof(self, *args, env=None, cwd=None):
        full = dict(os.environ)
        for var in ("PROF_OPTIONS", "MS_PROFILER_OPTIONS"):
            full.pop(var, None)
        full.update(env or {})
        p = subprocess.run([PROF, *args], capture_output=True, text=True, env=full,
                           cwd=cwd or self.tmp, timeout=120)
        return p

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        return path

    def run_dir(self, p):
        run = Run(p, os.path.join(self.tmp, "none"))
        self.assertTrue(run.run_dir, p.stderr)
        return run

    def test_torch_template_as_the_seed_prints_it(self):
        cwd = os.path.join(self.tmp, "cwd")
        os.mkdir(cwd)
        p = self.prof("run", "--config", self.write("profiler_config.json", SEED_TEMPLATE),
                      "--", workload("tx_steps"), "6", "1", cwd=cwd)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(notes(p.stderr), [])   # it asks for nothing prof cannot do
        run = self.run_dir(p)
        # prof_dir "./": the run directory is made in the working directory
        self.assertEqual(os.path.dirname(run.run_dir), cwd)
        # analyse false: recorded, not parsed
        self.assertIn("raw data in", p.stderr)
        self.assertFalse(os.path.exists(run.output("trace_view.json")))
        parse = self.prof("parse", "-q", run.run_dir)
        self.assertEqual(parse.returncode, 0, parse.stderr)
        trace = run.trace()
        self.assertEqual(recorded_steps(trace), [1])   # "active": 1
        self.assertEqual(ticks(trace), [])             # "msprof_tx": false
        info = run.json("profiler_info.json")["config"]
        self.assertEqual(info["schedule"], {"skip_first": 0, "wait": 0, "warmup": 0,
                                            "active": 1, "repeat": 1})
        self.assertTrue(info["data_simplification"])

    def test_torch_window_keys(self):
        # dynamic_profile's window: warm-up from start_step, then active
        cfg = self.write("w.json", {"start_step": 4, "warmup": 1, "active": 2,
                                    "experimental_config": {"msprof_tx": True}})
        p = self.prof("run", "-o", "out", "--config", cfg, "--", workload("tx_steps"), "9", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        trace = self.run_dir(p).trace()
        self.assertEqual(recorded_steps(trace), [5, 6])
        self.assertEqual(ticks(trace), [5, 6])

    def test_experimental_config_takes_effect(self):
        cfg = self.write("x.json", {"experimental_config": {
            "profiler_level": "Level_none", "export_type": "db", "data_simplification": True}})
        p = self.prof("run", "-o", "out", "--config", cfg, "--", workload("sim_work"), "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        run = self.run_dir(p)
        self.assertFalse(os.path.exists(run.path("raw")), "data_simplification")
        self.assertTrue(os.path.exists(run.output("profiler.db")), "export_type db")
        self.assertFalse(os.path.exists(run.output("kernel_details.csv")), "db alone")
        import sqlite3
        db = sqlite3.connect(run.output("profiler.db"))
        kernels = db.execute("SELECT count(*) FROM kernel_details").fetchone()[0]
        self.assertEqual(kernels, 0, "Level_none records no device activity")
        self.assertEqual(run.json("profiler_info.json")["config"]["profiler_level"], "Level_none")

    def test_each_key_that_cannot_act_is_named_once(self):
        cfg = self.write("n.json", {"with_flops": True, "experimental_config": {
            "aic_metrics": "PipeUtilization", "l2_cache": True, "op_attr": True,
            "record_op_args": True, "sys_io": True, "sys_interconnection": True}})
        p = self.prof("run", "-o", "out", "--config", cfg, "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        said = notes(p.stderr)
        keys = ["with_flops"] + ["experimental_config." + k for k in
                                 ("aic_metrics", "l2_cache", "op_attr", "record_op_args",
                                  "sys_io", "sys_interconnection")]
        self.assertEqual(len(said), len(keys), p.stderr)
        for key in keys:
            self.assertEqual(sum('key "%s": ' % key in l for l in said), 1, key)
        for line in said:
            self.assertIn(cfg, line)
        # before anything is launched
        self.assertLess(p.stderr.index(said[-1]), p.stderr.index("prof: recording into"))

    def test_ms_seed_example(self):
        out = os.path.join(self.tmp, "ms_out")
        p = self.prof("run", "--", workload("tx_steps"), "4", "1",
                      env={"MS_PROFILER_OPTIONS": json.dumps(dict(SEED_MS, output_path=out))})
        self.assertEqual(p.returncode, 0, p.stderr)
        run = self.run_dir(p)
        self.assertEqual(os.path.dirname(run.run_dir), out)
        self.assertEqual(recorded_steps(run.trace()), [1, 2, 3, 4])
        said = notes(p.stderr)
        self.assertEqual(len(said), 2, p.stderr)
        self.assertIn('MS_PROFILER_OPTIONS: key "hccl": ', said[0])
        self.assertIn('MS_PROFILER_OPTIONS: key "aicore_metrics": ', said[1])

    def test_ms_start_false_starts_paused(self):
        # prof_start when step 4 begins, prof_stop when step 7 begins
        for start, expected in ((False, [4, 5, 6]), (True, [1, 2, 3, 4, 5, 6])):
            p = self.prof("run", "-o", "out", "--", workload("tx_steps"), "9", "1", "4", "7",
                          env={"MS_PROFILER_OPTIONS": json.dumps({"start": start})})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(recorded_steps(self.run_dir(p).trace()), expected, start)

    def test_ms_op_time_false_records_no_device(self):
        p = self.prof("run", "-o", "out", "--", workload("sim_work"), "1",
                      env={"MS_PROFILER_OPTIONS": '{"op_time": false, "timeline_limit": 1}'})
        self.assertEqual(p.returncode, 0, p.stderr)
        run = self.run_dir(p)
        self.assertEqual(len(run.csv_rows("kernel_details.csv")), 1)   # the header
        config = run.json("profiler_info.json")["config"]
        self.assertEqual((config["activities"], config["timeline_limit"]), (["CPU"], 1))

    def test_precedence(self):
        # output_path from each source in turn: MS_PROFILER_OPTIONS <
        # PROF_OPTIONS < --config < flags
        d = {k: os.path.join(self.tmp, k) for k in ("ms", "prof", "config", "flag")}
        env = {"MS_PROFILER_OPTIONS": json.dumps({"output_path": d["ms"]})}
        cfg = self.write("p.json", {"prof_dir": d["config"]})
        runs = [((), env),
                ((), dict(env, PROF_OPTIONS=json.dumps({"output_path": d["prof"]}))),
                (("--config", cfg), dict(env, PROF_OPTIONS=json.dumps({"output_path": d["prof"]}))),
                (("--config", cfg, "-o", d["flag"]),
                 dict(env, PROF_OPTIONS=json.dumps({"output_path": d["prof"]})))]
        for (options, e), want in zip(runs, ("ms", "prof", "config", "flag")):
            p = self.prof("run", *options, "--", "true", env=e)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(os.path.dirname(self.run_dir(p).run_dir), d[want], want)
        # a key and its note: MindSpore's l2_cache is noted, PROF_OPTIONS takes it back
        # (its memory, profile_memory, acts and has no note)
        p = self.prof("run", "-o", "out", "--", "true",
                      env={"MS_PROFILER_OPTIONS": '{"l2_cache": true}'})
        self.assertEqual(len(notes(p.stderr)), 1, p.stderr)
        p = self.prof("run", "-o", "out", "--", "true",
                      env={"MS_PROFILER_OPTIONS": '{"l2_cache": true}',
                           "PROF_OPTIONS": '{"experimental_config": {"l2_cache": false}}'})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(notes(p.stderr), [])

    def test_bad_values_exit_2_before_launch(self):
        ms, po = "MS_PROFILER_OPTIONS", "PROF_OPTIONS"
        cases = [
            (ms, '{"start": "true"}', "start"), (ms, '{"output_path": 3}', "output_path"),
            (ms, '{"memory": 1}', "memory"), (ms, '{"hccl": null}', "hccl"),
            (ms, '{"profile_communication": 1}', "profile_communication"),
            (ms, '{"aicore_metrics": 9}', "aicore_metrics"), (ms, '{"l2_cache": "no"}', "l2_cache"),
            (ms, '{"profile_framework": "host"}', "profile_framework"),
            (ms, '{"data_process": 0}', "data_process"), (ms, '{"op_time": []}', "op_time"),
            (ms, '{"timeline_limit": "500"}', "timeline_limit"),
            (ms, '{"sync_enable": 1}', "sync_enable"),
            (ms, '{"parallel_strategy": 1}', "parallel_strategy"),
            (ms, '{"record_shapes": true}', "record_shapes"),   # not MindSpore's key
            (ms, '{"start": true', None),
            (po, '{"prof_dir": ""}', "prof_dir"), (po, '{"active": 0}', "active"),
            (po, '{"warmup": "1"}', "warmup"), (po, '{"start_step": 1.5}', "start_step"),
            (po, '{"with_flops": "no"}', "with_flops"), (po, '{"rank_list": [-1]}', "rank_list"),
            (po, '{"is_rank": 1}', "is_rank"),
            (po, '{"experimental_config": {"sys_io": 1}}', "experimental_config.sys_io"),
            ("config", {"experimental_config": {"aic_metric": "PipeUtilization"}},
             "experimental_config.aic_metric"),
            ("config", {"experimental_config": {"export_type": "csv"}},
             "experimental_config.export_type"),
            ("config", {"activities": ["CPU", "TPU"]}, "activities"),
        ]
        marker = os.path.join(self.tmp, "launched")
        for source, value, key in cases:
            options, env = [], {}
            if source == "config":
                options = ["--config", self.write("bad.json", value)]
                source = os.path.join(self.tmp, "bad.json")
            else:
                env = {source: value}
            p = self.prof("run", "-o", "out", *options, "--", "touch", marker, env=env)
            said = (source, value, p.stderr)
            self.assertEqual(p.returncode, 2, said)
            self.assertIn("prof: " + source + ": ", p.stderr, said)
            if key:
                self.assertIn('key "%s": ' % key, p.stderr, said)
            self.assertFalse(os.path.exists(marker), said)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "out")), said)

    def test_is_rank_in_a_static_run(self):
        # two ranks in one run: only rank 1's process records
        tx = workload("tx_steps")
        p = self.prof("run", "-o", "out", "--", "sh", "-c",
                      "RANK=0 %s 4 1 & RANK=1 %s 4 1; wait" % (tx, tx),
                      env={"PROF_OPTIONS": '{"is_rank": true, "rank_list": [1]}'})
        self.assertEqual(p.returncode, 0, p.stderr)
        run = self.run_dir(p)

        def steps_of(rank):
            with open(run.path("rank_%d" % rank, "PROFILER_OUTPUT", "trace_view.json")) as f:
                return recorded_steps(json.load(f))
        self.assertEqual(steps_of(1), [1, 2, 3, 4])
        self.assertEqual(steps_of(0), [])


if __name__ == "__main__":
    unittest.main()
