"""What the README's "Security" section promises: modes that do not depend
on the umask, no writing through planted symbolic links, an agent that does
nothing without its variables, confined archive extraction (the hostile
archives themselves are in test_archive.py and test_bad_input.py)."""
import glob
import os
import stat
import subprocess
import unittest

from proftest import BUILD, PROF, PYTHON, ProfTestCase, workload

AGENT = os.path.join(BUILD, "lib", "prof", "libprof_agent.so")


def walk_modes(top):
    """{path: (kind, mode)} of top and everything under it, links not followed."""
    out = {}
    st = os.lstat(top)
    out[top] = ("l" if stat.S_ISLNK(st.st_mode) else "d" if stat.S_ISDIR(st.st_mode) else "f",
                stat.S_IMODE(st.st_mode))
    if stat.S_ISDIR(st.st_mode):
        for root, dirs, files in os.walk(top):
            for n in dirs + files:
                p = os.path.join(root, n)
                s = os.lstat(p)
                kind = ("l" if stat.S_ISLNK(s.st_mode) else
                        "d" if stat.S_ISDIR(s.st_mode) else "f")
                out[p] = (kind, stat.S_IMODE(s.st_mode))
    return out


class Modes(ProfTestCase):
    """Every directory prof makes is 0750 and every file 0640, whatever the
    umask: the run, its re-parse (db, gzip), per-rank and cluster outputs,
    the archive, its extraction, the --dynamic directory."""

    def prof(self, args, umask, env=None):
        full = dict(os.environ)
        full.pop("RANK", None)
        full.update(env or {})
        p = subprocess.run([PROF, *args], capture_output=True, text=True, env=full,
                           timeout=180, preexec_fn=lambda: os.umask(umask))
        self.assertIn(p.returncode, (0, 3), p.stderr)
        return p

    def check_umask(self, umask):
        out = os.path.join(self.tmp, "out")
        dyn = os.path.join(self.tmp, "dyn")
        ranks = " ".join("RANK=%d %s 2 -1 none &" % (r, workload("sim_ranks")) for r in (0, 1))
        self.prof(["run", "-o", out, "--archive", "tar.gz", "--dynamic", dyn,
                   "--sampling-interval", "10", "--", "sh", "-c", ranks + " wait"], umask)
        run_dir = glob.glob(os.path.join(out, "*_prof"))[0]
        self.prof(["parse", "-q", "--export-type", "text,db", "--gzip", run_dir], umask)
        self.prof(["parse", "-q", run_dir + ".tar.gz"], umask)
        # a cluster directory of two runs
        cluster = os.path.join(self.tmp, "cluster")
        for r in (0, 1):
            self.prof(["run", "-o", cluster, "--sampling-interval", "0", "--",
                       workload("sim_ranks"), "2", "-1", "none"], umask, env={"RANK": str(r)})
        self.prof(["parse", "-q", "-j", "2", cluster], umask)

        seen = {}
        for top in (out, dyn, cluster):
            seen.update(walk_modes(top))
        names = {os.path.basename(p) for p in seen}
        # the walk covered what it is meant to cover
        for n in ("profiler.db", "trace_view.json.gz", "rank_0", "cluster_analysis_output",
                  "cluster_step_trace_time.csv", "prof_dynamic.log", "profiler_config.json",
                  "parse.done", "control", "profiler_info.json"):
            self.assertIn(n, names, "umask %03o" % umask)
        self.assertTrue(any(p.endswith(".tar.gz") for p in seen))
        # the archive was extracted next to itself, into a fresh directory
        self.assertEqual(len(glob.glob(os.path.join(out, "*_prof.*", "*_prof", "raw"))), 1)
        # the one kind of link prof makes: cluster_analysis_output/hta/'s,
        # relative, to a rank's trace inside the same run directory
        links = {p for p, (k, m) in seen.items() if k == "l"}
        for p in links:
            self.assertIn(os.path.join("cluster_analysis_output", "hta", "rank-"), p)
            target = os.readlink(p)
            self.assertFalse(os.path.isabs(target), target)
            run = p.split(os.sep + "cluster_analysis_output")[0]
            self.assertTrue(os.path.realpath(p).startswith(os.path.realpath(run) + os.sep), p)
        bad = {p: "%s %04o" % (k, m) for p, (k, m) in seen.items()
               if (k, m) not in (("d", 0o750), ("f", 0o640)) and p not in links}
        self.assertEqual(bad, {}, "umask %03o" % umask)
        for p, (k, m) in seen.items():
            self.assertFalse(m & 0o002 and p not in links, p)   # nothing world-writable

    def test_umask_000(self):
        self.check_umask(0o000)

    def test_umask_077(self):
        self.check_umask(0o077)


class Symlinks(ProfTestCase):
    """A link planted where prof writes is refused or replaced; its target
    is never written."""

    def setUp(self):
        super().setUp()
        self.victim_dir = os.path.join(self.tmp, "victim")
        os.mkdir(self.victim_dir)
        self.victim = os.path.join(self.victim_dir, "precious")
        with open(self.victim, "w") as f:
            f.write("untouched\n")

    def assertVictimUntouched(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), "untouched\n")
        self.assertEqual(os.listdir(self.victim_dir), ["precious"])

    def recorded(self):
        out = os.path.join(self.tmp, "out")
        p = subprocess.run([PROF, "run", "-o", out, "--no-parse", "--",
                            workload("tx_steps"), "3", "1"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return glob.glob(os.path.join(out, "*_prof"))[0]

    def parse(self, *args):
        return subprocess.run([PROF, "parse", "-q", *args], capture_output=True, text=True,
                              timeout=60)

    def test_output_path_through_a_link(self):
        link = os.path.join(self.tmp, "link")
        os.symlink(self.victim_dir, link)
        p = subprocess.run([PROF, "run", "-o", link, "--", "true"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn("is a symbolic link", p.stderr)
        self.assertVictimUntouched()

    def test_profiler_output_planted_as_a_link(self):
        run_dir = self.recorded()
        os.symlink(self.victim_dir, os.path.join(run_dir, "PROFILER_OUTPUT"))
        p = self.parse(run_dir)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("PROFILER_OUTPUT is a symbolic link; refusing to write there", p.stderr)
        self.assertVictimUntouched()

    def test_output_files_planted_as_links(self):
        run_dir = self.recorded()
        po = os.path.join(run_dir, "PROFILER_OUTPUT")
        os.mkdir(po, 0o750)
        planted = ["trace_view.json", "trace_view.json.tmp", "parse.done", "profiler.db.tmp",
                   "trace_view.json.gz.tmp", "op_statistic.csv.tmp"]
        for n in planted:
            os.symlink(self.victim, os.path.join(po, n))
        os.symlink(self.victim, os.path.join(run_dir, "profiler_metadata.json"))
        p = self.parse("--export-type", "text,db", run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.parse("--gzip", run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertVictimUntouched()
        for n in ("trace_view.json.gz", "parse.done", "profiler.db"):
            self.assertFalse(os.path.islink(os.path.join(po, n)), n)
        self.assertEqual([n for n in os.listdir(po) if os.path.islink(os.path.join(po, n))], [])

    def test_raw_planted_as_a_link(self):
        run_dir = self.recorded()
        raw = os.path.join(run_dir, "raw")
        os.rename(raw, os.path.join(self.victim_dir, "raw"))
        os.symlink(os.path.join(self.victim_dir, "raw"), raw)
        before = walk_modes(self.victim_dir)
        p = self.parse("--data-simplification", run_dir)
        self.assertIn(p.returncode, (0, 3, 4), p.stderr)
        # read perhaps, but neither written nor removed through the link
        self.assertEqual(walk_modes(self.victim_dir), before)
        with open(self.victim) as f:
            self.assertEqual(f.read(), "untouched\n")

    def test_archive_destination_planted_as_a_link(self):
        run_dir = self.recorded()
        os.symlink(self.victim, run_dir + ".zip")
        p = self.parse("--archive", "zip", run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.islink(run_dir + ".zip"))
        self.assertVictimUntouched()

    def test_extraction_destination_planted_as_a_link(self):
        run_dir = self.recorded()
        p = self.parse("--archive", "tar.gz", run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        arch = run_dir + ".tar.gz"
        moved = os.path.join(self.tmp, "away")
        os.rename(run_dir, moved)
        os.symlink(self.victim_dir, run_dir)     # the name extraction would take
        p = self.parse(arch)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertVictimUntouched()
        self.assertTrue(os.path.islink(run_dir))
        self.assertIn("extracted", p.stderr)

    def test_dynamic_files_planted_as_links(self):
        dyn = os.path.join(self.tmp, "dyn")
        os.mkdir(dyn)
        os.symlink(self.victim, os.path.join(dyn, "prof_dynamic.log"))
        p = subprocess.run([PROF, "run", "-o", os.path.join(self.tmp, "out"),
                            "--dynamic", dyn, "--", "true"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--dynamic %s: cannot write" % dyn, p.stderr)
        self.assertVictimUntouched()
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out")))
        for n in ("prof_dynamic.log", "profiler_config.json"):
            if os.path.lexists(os.path.join(dyn, n)):
                os.unlink(os.path.join(dyn, n))
        os.symlink(self.victim, os.path.join(dyn, "profiler_config.json"))
        p = subprocess.run([PROF, "run", "-o", os.path.join(self.tmp, "out"),
                            "--dynamic", dyn, "--", "true"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.islink(os.path.join(dyn, "profiler_config.json")))
        self.assertVictimUntouched()


INERT_PROGRAM = r"""
import os, subprocess, sys, threading
def threads():
    with open("/proc/self/status") as f:
        return [l.split()[1] for l in f if l.startswith("Threads:")][0]
print("threads", threads())
print("cwd", sorted(os.listdir(".")))
sys.stdout.flush()
subprocess.run(["/bin/echo", "child", "ran"])       # fork + exec under the agent
print("to stderr", file=sys.stderr)
print("threads", threads())
print("fds", sorted(os.listdir("/proc/self/fd")))
sys.stdout.flush()
os._exit(7)
"""


class InertAgent(ProfTestCase):
    """LD_PRELOAD=libprof_agent.so without its PROF_AGENT_* variables: the
    same output, status, threads and descriptors, and no file anywhere."""

    def run_program(self, preload):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("PROF_") and k != "LD_PRELOAD"}
        work = os.path.join(self.tmp, "preload" if preload else "plain")
        tmp = os.path.join(work, "tmp")
        os.makedirs(tmp)
        env.update(TMPDIR=tmp, HOME=work)
        if preload:
            env["LD_PRELOAD"] = AGENT
            # A PROF_SANITIZE build: the agent loads only behind the ASan runtime.
            rt = [l.split("=>")[1].split()[0] for l in subprocess.run(
                ["ldd", AGENT], capture_output=True, text=True).stdout.splitlines()
                if "libasan" in l or "libclang_rt.asan" in l]
            if rt:
                env["LD_PRELOAD"] = rt[0] + ":" + AGENT
                env["ASAN_OPTIONS"] = "detect_leaks=0"
        # the agent really is loaded
        maps = subprocess.run([PYTHON, "-c", "print(open('/proc/self/maps').read())"],
                              capture_output=True, text=True, env=env, cwd=work)
        self.assertEqual(AGENT in maps.stdout, preload)
        p = subprocess.run([PYTHON, "-S", "-c", INERT_PROGRAM], capture_output=True, text=True,
                           env=env, cwd=work, timeout=60)
        created = sorted(os.path.relpath(os.path.join(r, n), work)
                         for r, ds, fs in os.walk(work) for n in ds + fs)
        return p.returncode, p.stdout, p.stderr, created

    @unittest.skipUnless(os.path.exists(AGENT), "no agent at " + AGENT)
    def test_agent_without_its_variables_does_nothing(self):
        plain = self.run_program(False)
        preloaded = self.run_program(True)
        self.assertEqual(plain[0], 7)
        self.assertIn("child ran", plain[1])
        self.assertEqual(preloaded, plain)
        self.assertEqual(preloaded[3], ["tmp"])   # nothing in cwd, nothing in TMPDIR


if __name__ == "__main__":
    unittest.main()
