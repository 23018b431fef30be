"""prof on training programs written the way PyTorch users write them
(issue 17): torchvision's FakeData through forked DataLoader workers with
shapes and stacks, DDP under torchrun and under mp.spawn, a GAN's two
optimizers. What is checked is what a user meets first: the program's
output and status unchanged, the operators there, steps right, and
anything prof could not do said at the end of the run. (Inference, thread
loops, Hogwild, launch scripts and a model trained by hand:
test_real_scripts.py.)"""
import collections
import glob
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PROF, PYTHON, ProfTestCase, Run, events, raw_records  # noqa: E402
from realprog import WORKLOADS, RealProgram, have  # noqa: E402


@unittest.skipUnless(have("torchvision"), "needs torchvision (python3-torchvision)")
class TorchvisionCnn(RealProgram):
    STEPS = 6

    def test_cnn_fakedata_workers_shapes_stacks(self):
        cmd = [PYTHON, os.path.join(WORKLOADS, "torch_cnn_fakedata.py"), "--steps",
               str(self.STEPS), "--workers", "2"]
        run = self.prof_run("--record-shapes", "--with-stack", "--", *cmd)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(run.stdout, self.bare(*cmd).stdout)   # the program's own output
        self.assertNotIn("hook stopped", run.stderr)
        # nothing to say: the workers, forked after the optimizer was built,
        # neither step nor take the trainer's loop for theirs
        self.assertNotIn("prof: note", run.stderr)
        t = run.trace()
        ops = collections.Counter(e["name"] for e in events(t, ph="X", cat="cpu_op"))
        # 6 training steps of 2 convolutions, then 2 evaluation batches
        self.assertEqual(ops["aten::conv2d"], 2 * (self.STEPS + 2), ops.most_common(8))
        convs = events(t, ph="X", cat="cpu_op", name="aten::conv2d")
        self.assertTrue(all(e["args"].get("Input Dims") for e in convs))
        # the script's frame shows the training loop's line, not where the
        # profiler session began (the optimizer's) nor `import torch`
        with open(os.path.join(WORKLOADS, "torch_cnn_fakedata.py")) as f:
            loop_line = 1 + [ln.strip() for ln in f].index("for x, y in loader:")
        frame = "torch_cnn_fakedata.py(%d): main" % loop_line
        stacks = [e["args"].get("Call stack", "") for e in convs]
        self.assertTrue(stacks and all(frame in st for st in stacks[:2 * self.STEPS]),
                        (frame, stacks[:1]))
        steps = [e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")]
        self.assertEqual(len(steps), self.STEPS)
        fetch = collections.Counter(e["pid"] for e in events(t, ph="X", name="DataLoader fetch"))
        # 2 workers for the training epoch, 2 for the evaluation, under their own pids
        self.assertEqual(len(fetch), 4, fetch)
        self.assertNotIn(steps[0]["pid"], fetch)
        # workers named as such, not as the trainer they were forked from
        names = {e["pid"]: e["args"]["name"] for e in events(t, ph="M", name="process_name")}
        self.assertTrue(all(names[p].startswith("DataLoader worker: ") for p in fetch), names)
        self.assertFalse(names[steps[0]["pid"]].startswith("DataLoader worker"))
        # one span per batch taken, prof's, not torch's record_function beside it
        spans = collections.Counter(e["name"] for e in events(t, ph="X")
                                    if e["name"].startswith("enumerate(DataLoader)#"))
        self.assertEqual(list(spans), ["enumerate(DataLoader)#_BaseDataLoaderIter.__next__"],
                         spans)
        # operators from the training loop on: none before the optimizer was built
        built = events(t, ph="i", name="Optimizer.__init__#SGD.__init__")
        self.assertEqual(len(built), 1)
        self.assertFalse([e for e in convs if float(e["ts"]) < float(built[0]["ts"])])
        # operator_details.csv's Step Id: each training step's two
        # convolutions carry it; the evaluation's are outside every step
        conv_steps = [r[-1] for r in run.csv_rows("operator_details.csv")[1:]
                      if r[0] == "aten::conv2d"]
        self.assertEqual(collections.Counter(conv_steps),
                         dict({str(k): 2 for k in range(1, self.STEPS + 1)}, **{"": 4}))
        self.assertEqual(conv_steps[-4:], [""] * 4)


@unittest.skipUnless(have("torch.distributed.run"), "needs torch.distributed")
class DdpGloo(RealProgram):
    """Two ranks under torchrun (gloo, CPU): what a multi-rank run's
    bookkeeping says (issue 17 §7). torch 1.13 on Python 3.11 needs
    --redirects 1 --tee 1 there."""
    STEPS = 6

    def test_two_ranks_under_torchrun(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
        out = os.path.join(self.tmp, "out")
        cmd = [PYTHON, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_port", str(29500 + os.getpid() % 1000), "--redirects", "1",
               "--tee", "1", os.path.join(WORKLOADS, "torch_ddp_gloo.py"), str(self.STEPS)]
        proc = subprocess.run([PROF, "run", "-o", out, "--record-shapes", "--"] + cmd,
                              capture_output=True, text=True, timeout=240, env=env)
        run = Run(proc, out)
        self.assertEqual(run.rc, 0, run.stderr[-3000:])
        self.assertIn("ddp: %d steps on 2 ranks" % self.STEPS, run.stdout)
        self.assertIn("%d steps: %d on each of 2 ranks" % (2 * self.STEPS, self.STEPS),
                      run.stderr)
        for r in range(2):
            meta = run.json("rank_%d" % r, "profiler_metadata.json")["ENV_VARIABLES"]
            self.assertEqual((meta.get("RANK"), meta.get("WORLD_SIZE")), (str(r), "2"))
            t = run.json("rank_%d" % r, "PROFILER_OUTPUT", "trace_view.json")
            self.assertEqual(t["distributedInfo"], {"rank": r})
            steps = [e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")]
            self.assertEqual(len(steps), self.STEPS)
            ops = collections.Counter(e["name"] for e in events(t, ph="X", cat="cpu_op"))
            self.assertGreaterEqual(ops["c10d::allreduce_"], self.STEPS, ops.most_common(10))
        # gloo's collectives, seen from the framework (§4): in every step's
        # Communication, in communication.json with their sizes, and in the
        # cluster's matrix
        for r in range(2):
            comm = run.json("rank_%d" % r, "PROFILER_OUTPUT", "communication.json")
            self.assertEqual(sorted(comm), sorted("step%d" % i for i in range(1, self.STEPS + 1)))
            for step in comm.values():
                ops = step["collective"]
                self.assertTrue(any(k.startswith("gloo:all_reduce__") for k in ops), ops)
                sizes = [v["Communication Bandwidth Info"]["HOST"]["Transit Size(MB)"]
                         for v in ops.values()]
                # DDP's gradient bucket (64*256+256+256*10+10 floats) and the metric
                self.assertIn(round(19210 * 4 / 2 ** 20, 6), [round(x, 6) for x in sizes])
        rows = run.csv_rows("step_trace_time.csv")
        self.assertTrue(all(float(r[5]) > 0 for r in rows[1:]), rows)   # Communication
        matrix = run.json("cluster_analysis_output", "cluster_communication_matrix.json")
        self.assertTrue(matrix)
        # a CPU job: no finding of the cluster speaks of a device (host rows
        # hold the whole step in Free), nor blames a rank for waiting in gloo
        found = run.json("cluster_analysis_output", "findings.json")
        self.assertFalse([f for f in found if f["rule"] in ("device_idle", "communication")],
                         found)
        self.assertFalse([f for f in found if "in Communication" in f["text"]], found)
        self.assertEqual(rows[0][-1], "Rank")
        self.assertEqual(sorted(r[-1] for r in rows[1:]), ["0"] * self.STEPS + ["1"] * self.STEPS)
        # torchrun's launcher only imports and launches: it records nothing
        # (it leaves no stream at all), the two ranks record operators
        t = run.trace()
        names = {e["pid"]: e["args"]["name"] for e in events(t, ph="M", name="process_name")}
        launcher = [p for p, n in names.items() if "torch.distributed.run" in n]
        self.assertFalse([e for e in events(t, ph="X", cat="cpu_op") if e["pid"] in launcher])
        ranks = [p for p, n in names.items() if n.endswith("torch_ddp_gloo.py %d" % self.STEPS)]
        self.assertEqual(len(ranks), 2, names)
        for p in ranks:
            self.assertTrue(events(t, ph="X", cat="cpu_op", pid=p), p)


class DdpSpawn(ProfTestCase):
    """DDP started by torch.multiprocessing.spawn, as PyTorch's DDP tutorial
    does: no launcher sets RANK, each rank is named only by its
    init_process_group call. The run is parsed per rank as under torchrun,
    and is_rank picks ranks known that late. Each rank records a mark
    before it knows its rank, so its rank comes in rank.raw, and takes its
    batches from a spawned DataLoader worker, which goes with its rank."""
    STEPS = 4
    RAW_REC_PROCESS = 10

    def spawn(self, *options, env=None, mode=()):
        cmd = [PYTHON, os.path.join(WORKLOADS, "torch_ddp_gloo.py"), str(self.STEPS), "spawn",
               "2", str(29000 + os.getpid() % 1000), *mode]
        return self.prof_run(cmd, *options, env=env, timeout=240)

    def rank_streams(self, run):
        return sorted(glob.glob(run.path("raw", "*", "rank.raw")))

    def test_ranks_named_by_init_process_group(self):
        run = self.spawn()
        self.assertEqual(run.rc, 0, run.stderr[-3000:])
        self.assertIn("ddp: %d steps on 2 ranks" % self.STEPS, run.stdout)
        self.assertIn("%d steps: %d on each of 2 ranks" % (2 * self.STEPS, self.STEPS),
                      run.stderr)
        streams = self.rank_streams(run)
        self.assertEqual(len(streams), 2, streams)
        self.assertEqual(raw_records(streams, self.RAW_REC_PROCESS), 2)
        for r in range(2):
            t = run.json("rank_%d" % r, "PROFILER_OUTPUT", "trace_view.json")
            self.assertEqual(t["distributedInfo"], {"rank": r})
            steps = [e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")]
            self.assertEqual(len(steps), self.STEPS)
            # what the rank recorded before it knew its rank is its own
            marks = [e for e in events(t) if e.get("name") == "set-up before init_process_group"]
            self.assertEqual(len(marks), 1, r)
            names = {e["pid"]: e["args"]["name"] for e in events(t, ph="M", name="process_name")}
            workers = [p for p, n in names.items() if n.startswith("DataLoader worker")]
            self.assertEqual(len(workers), 1, names)
            fetches = events(t, ph="X", name="DataLoader fetch", pid=workers[0])
            self.assertEqual(len(fetches), self.STEPS, r)
            comm = run.json("rank_%d" % r, "PROFILER_OUTPUT", "communication.json")
            self.assertEqual(len(comm), self.STEPS)
        rows = run.csv_rows("step_trace_time.csv")
        self.assertEqual(rows[0][-1], "Rank")
        self.assertEqual(sorted(r[-1] for r in rows[1:]), ["0"] * self.STEPS + ["1"] * self.STEPS)
        self.assertTrue(run.json("cluster_analysis_output", "cluster_communication_matrix.json"))

    def test_rank_seen_at_step_end(self):
        """init_process_group called past prof's wrapper (code that bound
        torch's function before the hooks came, as device_mesh does): the
        default group is found at the first step's end."""
        run = self.spawn(mode=["unwrapped"])
        self.assertEqual(run.rc, 0, run.stderr[-3000:])
        self.assertIn("%d steps: %d on each of 2 ranks" % (2 * self.STEPS, self.STEPS),
                      run.stderr)
        self.assertEqual(len(self.rank_streams(run)), 2)
        for r in range(2):
            t = run.json("rank_%d" % r, "PROFILER_OUTPUT", "trace_view.json")
            self.assertEqual(t["distributedInfo"], {"rank": r})
            steps = [e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")]
            self.assertEqual(len(steps), self.STEPS)

    def test_forked_ranks_end_with_os_exit(self):
        """A multiprocessing.Process per rank, forked: each rank ends with
        os._exit (no atexit), and its last operators are there all the same."""
        cmd_fork = [PYTHON, os.path.join(WORKLOADS, "torch_ddp_gloo.py"), str(self.STEPS),
                    "fork", "2", str(29100 + os.getpid() % 1000)]
        run = self.prof_run(cmd_fork, out=os.path.join(self.tmp, "fork"), timeout=240)
        self.assertEqual(run.rc, 0, run.stderr[-3000:])
        self.assertIn("ddp: %d steps on 2 ranks" % self.STEPS, run.stdout)
        self.assertIn("%d steps: %d on each of 2 ranks" % (2 * self.STEPS, self.STEPS),
                      run.stderr)
        for r in range(2):
            t = run.json("rank_%d" % r, "PROFILER_OUTPUT", "trace_view.json")
            self.assertEqual(t["distributedInfo"], {"rank": r})
            # fewer steps than a flush every 10: all sent at os._exit; two
            # Linear layers a step
            self.assertEqual(len(events(t, ph="X", cat="cpu_op", name="aten::addmm")),
                             2 * self.STEPS, r)

    def test_is_rank_with_late_ranks(self):
        run = self.spawn(env={"PROF_OPTIONS": '{"is_rank": true, "rank_list": [1]}'})
        self.assertEqual(run.rc, 0, run.stderr[-3000:])
        self.assertIn("ddp: %d steps on 2 ranks" % self.STEPS, run.stdout)
        # nothing recorded before the ranks were known: no rank.raw is needed
        self.assertEqual(self.rank_streams(run), [])
        t1 = run.json("rank_1", "PROFILER_OUTPUT", "trace_view.json")
        self.assertTrue(events(t1, ph="X", cat="cpu_op", name="aten::addmm"))
        self.assertFalse([e for e in events(t1) if e.get("name", "").startswith("set-up")])
        if os.path.isdir(run.path("rank_0")):
            t0 = run.json("rank_0", "PROFILER_OUTPUT", "trace_view.json")
            self.assertFalse(events(t0, ph="X", cat="cpu_op"))


class Gan(RealProgram):
    """D.step() then G.step() each iteration (issue 17 §6): a step spans
    one whole cycle once the cycle is seen, and no update falls outside
    every step."""
    ITER = 6

    def test_two_optimizers(self):
        cmd = [PYTHON, os.path.join(WORKLOADS, "torch_gan.py"), str(self.ITER)]
        run = self.prof_run("--", *cmd)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("gan: %d iterations" % self.ITER, run.stdout)
        t = run.trace()
        steps = sorted((e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        self.assertEqual(len(steps), self.ITER)
        opt = events(t, ph="X", cat="user_annotation")
        opt = [e for e in opt if e["name"].startswith("Optimizer.step#")]
        self.assertEqual(len(opt), 2 * self.ITER)

        def inside(s):
            return [o["name"] for o in opt if s["ts"] <= o["ts"] < s["ts"] + s["dur"]]
        self.assertEqual(sum(len(inside(s)) for s in steps), 2 * self.ITER)   # none outside
        for s in steps[2:]:   # steps 1 and 2 come before the cycle is known
            self.assertEqual(inside(s), ["Optimizer.step#Adam.step", "Optimizer.step#SGD.step"])


if __name__ == "__main__":
    unittest.main()
