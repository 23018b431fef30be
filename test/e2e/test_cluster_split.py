"""One `prof run` whose children are the ranks (as under torchrun): four
sim_ranks started by a shell with RANK=0..3, rank 2 slow in Free. The parse
writes RUN_DIR/rank_<r>/PROFILER_OUTPUT/ per rank (only that rank's
processes, distributedInfo naming it) besides the combined output, and
RUN_DIR/cluster_analysis_output/ over the ranks. A run of one rank is not
split."""
import collections
import glob
import json
import os
import subprocess
import unittest

from proftest import PROF, ProfTestCase, events, run_sim_ranks, workload

STEPS = 3
RANKS = 4


def cpu_pids(trace):
    return {e["pid"] for e in events(trace, ph="M", name="process_labels")
            if e["args"]["labels"] == "CPU"}


class ClusterSplit(ProfTestCase):
    def check_split(self, run_dir):
        combined = json.load(open(os.path.join(run_dir, "PROFILER_OUTPUT", "trace_view.json")))
        self.assertNotIn("distributedInfo", combined)
        seen = set()
        for r in range(RANKS):
            out = os.path.join(run_dir, "rank_%d" % r, "PROFILER_OUTPUT")
            self.assertTrue(os.path.exists(os.path.join(out, "parse.done")), out)
            with open(os.path.join(out, "trace_view.json")) as f:
                text = f.read()
            self.assertRegex(text, r'"distributedInfo": \{\s*"rank": %d\s*\}' % r)
            pids = cpu_pids(json.loads(text))
            self.assertEqual(len(pids), 1, pids)   # the rank's sim_ranks only
            self.assertFalse(pids & seen)
            seen |= pids
            info = json.load(open(os.path.join(run_dir, "rank_%d" % r, "profiler_info.json")))
            self.assertEqual(info["rank"], r)
            # the folder HTA loads: one rank-<r>.json a rank, the rank's own trace
            hta = os.path.join(run_dir, "cluster_analysis_output", "hta", "rank-%d.json" % r)
            self.assertTrue(os.path.islink(hta), hta)
            self.assertTrue(os.path.samefile(hta, os.path.join(out, "trace_view.json")))
        # the launching shell records nothing: it leaves no stream, and
        # the combined output has the ranks' processes only
        self.assertEqual(seen, cpu_pids(combined))
        slow = json.load(open(os.path.join(run_dir, "cluster_analysis_output",
                                           "cluster_slow_rank.json")))
        # the ranks run side by side, so a busy machine may stall another
        # rank in any phase: rank 2 must be among those slow in Free
        verdicts = [(v["rank"], v["phase"]) for v in slow["slow"]]
        self.assertIn((2, "Free"), verdicts, slow)
        with open(os.path.join(run_dir, "cluster_analysis_output",
                               "cluster_step_trace_time.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 1 + RANKS * STEPS)

    def check_bookkeeping(self, run_dir, stderr):
        """Issue 17 §7: each rank's own files and rows say whose they are."""
        self.assertIn("%d steps: %d on each of %d ranks" % (STEPS * RANKS, STEPS, RANKS),
                      stderr)
        with open(os.path.join(run_dir, "PROFILER_OUTPUT", "step_trace_time.csv")) as f:
            rows = [ln.split(",") for ln in f.read().splitlines()]
        self.assertEqual(rows[0][-1], "Rank")   # appended after Ascend's columns
        self.assertEqual(sorted(int(r[-1]) for r in rows[1:] if r[1] == "1"),
                         list(range(RANKS)))
        with open(os.path.join(run_dir, "rank_1", "PROFILER_OUTPUT",
                               "step_trace_time.csv")) as f:
            self.assertNotIn("Rank", f.readline())   # one rank's file: Ascend's header
        for r in range(RANKS):
            with open(os.path.join(run_dir, "rank_%d" % r, "profiler_info.json")) as f:
                text = f.read()
            self.assertNotRegex(text, r'"real_ns":\s*[0-9.]+e\+', "integers stay integers")
            self.assertRegex(text, r'"real_ns":\s*[0-9]{19}\b')
            meta = json.load(open(os.path.join(run_dir, "rank_%d" % r,
                                               "profiler_metadata.json")))
            env = meta["ENV_VARIABLES"]
            self.assertEqual((env.get("RANK"), env.get("WORLD_SIZE")), (str(r), str(RANKS)))
        st = subprocess.run([PROF, "stats", "--view", "steps", "--format", "csv", run_dir],
                            capture_output=True, text=True, timeout=60)
        self.assertTrue(st.stdout.startswith("Step,Rank,Dev,"), st.stdout[:200])
        # the overview shows the ranks the parse analysed, each with its rank_<r>/
        st = subprocess.run([PROF, "stats", run_dir], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("Ranks, their mean step (cluster_analysis_output/)", st.stdout)
        self.assertRegex(st.stdout, r"\n +2 +%d +[0-9. ]+Free\n" % STEPS)
        j = json.loads(subprocess.run([PROF, "stats", "--format", "json", run_dir],
                                      capture_output=True, text=True, timeout=60).stdout)
        self.assertEqual([(x["rank"], x["run"]) for x in j["ranks"]],
                         [(r, os.path.join(run_dir, "rank_%d" % r)) for r in range(RANKS)])
        self.assertIn((2, "Free"), [(v["rank"], v["phase"]) for v in j["slow_ranks"]])
        # every view: the ranks once (a JSON key is said once)
        text = subprocess.run([PROF, "stats", "--view", "all", "--format", "json", run_dir],
                              capture_output=True, text=True, timeout=60).stdout
        keys = json.loads(text, object_pairs_hook=lambda kv: [k for k, _ in kv])
        self.assertEqual(keys.count("ranks"), 1, keys)
        self.assertEqual(keys.count("slow_ranks"), 1, keys)
        # quiet means quiet, and a run prof did not finish is said once, not once a rank
        info = os.path.join(run_dir, "profiler_info.json")
        data = json.load(open(info))
        data.pop("end_info")
        with open(info, "w") as f:
            json.dump(data, f)
        p = subprocess.run([PROF, "parse", "-q", run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.count("no end_info"), 1, p.stderr)

    def test_ranks_of_one_run(self):
        p, run_dir = run_sim_ranks(os.path.join(self.tmp, "out"), STEPS, 2, "free")
        self.assertEqual(p.returncode, 0, p.stderr)
        # prof run's stdout is the program's: prof's own lines go to stderr
        self.assertNotIn("prof parse:", p.stdout)
        self.assertIn("slow rank 2: Free", p.stderr)
        self.check_split(run_dir)
        # an earlier parse's rank this run does not hold goes; a link stays
        os.makedirs(os.path.join(run_dir, "rank_9", "PROFILER_OUTPUT"))
        os.symlink(self.tmp, os.path.join(run_dir, "rank_8"))
        # prof parse on the run directory does the same again
        p = subprocess.run([PROF, "parse", run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("slow rank 2: Free", p.stdout)
        self.assertIn("rank_3/PROFILER_OUTPUT", p.stdout)
        self.check_split(run_dir)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "rank_9")))
        self.assertIn("rank_9: removed, from an earlier parse (this run has no rank 9)",
                      p.stderr)
        self.assertTrue(os.path.islink(os.path.join(run_dir, "rank_8")))
        self.assertEqual(sorted(os.listdir(os.path.join(run_dir, "cluster_analysis_output",
                                                        "hta"))),
                         ["rank-%d.json" % r for r in range(RANKS)])
        self.assertTrue(os.path.isdir(self.tmp))
        self.check_bookkeeping(run_dir, p.stdout)

    def test_restarted_rank(self):
        """Rank 1 runs again after both ranks ended (torchrun's --max_restarts):
        rank_1/ holds both of its processes, their rows told apart by a Pid
        column, and the cluster analysis still reads rank 1's steps."""
        sim = workload("sim_ranks")
        loop = ("for r in 0 1; do RANK=$r WORLD_SIZE=2 %s %d -1 none & done; wait; "
                "RANK=1 WORLD_SIZE=2 %s %d -1 none" % (sim, STEPS, sim, STEPS))
        env = dict(os.environ)
        env.pop("RANK", None)
        out = os.path.join(self.tmp, "out")
        p = subprocess.run([PROF, "run", "-o", out, "--sampling-interval", "0", "--",
                            "sh", "-c", loop], capture_output=True, text=True, env=env,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("%d steps: %d on each of 3 processes of 2 ranks" % (3 * STEPS, STEPS),
                      p.stderr)
        self.assertIn("rank 1 stepped in 2 processes (restarted by torchrun?): rank_1/ holds "
                      "them all, told apart by its step_trace_time.csv's Pid column", p.stderr)
        self.assertNotIn("no readable", p.stderr)
        run_dir = glob.glob(os.path.join(out, "*_prof"))[0]

        def rows(*where):
            with open(os.path.join(run_dir, *where, "PROFILER_OUTPUT",
                                   "step_trace_time.csv")) as f:
                return [ln.split(",") for ln in f.read().splitlines()]
        r1, r0 = rows("rank_1"), rows("rank_0")
        self.assertEqual(r1[0][-2:], ["Preparing", "Pid"])
        self.assertEqual(sorted(collections.Counter(r[-1] for r in r1[1:]).values()),
                         [STEPS, STEPS])
        self.assertEqual(r0[0][-1], "Preparing")   # one process: Ascend's header
        both = rows()
        self.assertEqual(both[0][-2:], ["Rank", "Pid"])
        self.assertEqual(len({r[-1] for r in both[1:]}), 3)
        with open(os.path.join(run_dir, "cluster_analysis_output",
                               "cluster_step_trace_time.csv")) as f:
            cl = [ln.split(",") for ln in f.read().splitlines()[1:]]
        self.assertEqual(sorted((r[1], r[2]) for r in cl if r[0] == "1"),
                         [("rank", "0"), ("rank", "1")])

    def test_one_rank_not_split(self):
        run = self.prof_run([workload("sim_ranks"), "2", "-1", "none"],
                            "--sampling-interval", "0", env={"RANK": "1"})
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        self.assertEqual(glob.glob(run.path("rank_*")), [])
        self.assertFalse(os.path.exists(run.path("cluster_analysis_output")))
        self.assertEqual(run.trace()["distributedInfo"], {"rank": 1})


if __name__ == "__main__":
    unittest.main()
