"""The static build (-DPROF_STATIC=ON, test/ci.sh's static stage): one
bin/prof that needs only glibc, copied alone into an empty directory, runs
the example training script with the agent and Python hooks it unpacks
into its cache; the cache is safe when many processes start at once, a
changed file in it is replaced, and a cache directory that is a link or
another user's is refused. Skipped for the normal build."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import unittest

from proftest import PROF, PYTHON, SRC, ProfTestCase, prof_features

GLIBC = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
         "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}


@unittest.skipUnless("static" in prof_features(), "not a static build (-DPROF_STATIC=ON)")
class Static(ProfTestCase):
    def setUp(self):
        super().setUp()
        self.home = os.path.join(self.tmp, "home")
        self.dir = os.path.join(self.tmp, "empty")
        os.makedirs(self.home)
        os.makedirs(self.dir)
        self.prof = os.path.join(self.dir, "prof")
        shutil.copy2(PROF, self.prof)
        version = subprocess.run([self.prof, "--version"], capture_output=True, text=True).stdout
        self.build_id = re.search(r"^build: static (\S+)", version, re.M).group(1)
        self.cache = os.path.join(self.home, ".cache", "prof", self.build_id)

    def run_prof(self, *args, env_extra=None, timeout=300):
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home, **(env_extra or {})}
        return subprocess.run([self.prof, *args], capture_output=True, text=True, env=env,
                              cwd=self.dir, timeout=timeout)

    def test_needs_only_glibc(self):
        out = subprocess.run(["ldd", self.prof], capture_output=True, text=True, check=True)
        libs = {os.path.basename(l.split()[0]) for l in out.stdout.splitlines() if l.strip()}
        self.assertTrue(libs <= GLIBC, out.stdout)

    def test_version_says_static(self):
        out = self.run_prof("--version").stdout
        self.assertIn("static", out)
        self.assertIn("lib/prof/libprof_agent.so", out)
        self.assertIn("share/prof/python", out)

    def test_train_parse_archive_db(self):
        run = self.run_prof("run", "-o", "out", "--archive", "tar.gz", "--",
                            PYTHON, os.path.join(SRC, "share/prof/examples/train.py"),
                            env_extra={"PROF_OPTIONS": '{"export_type": ["text", "db"]}'})
        self.assertEqual(run.returncode, 0, run.stderr)
        out = os.path.join(self.dir, "out")
        rd = os.path.join(out, next(d for d in os.listdir(out) if d.endswith("_prof")))
        self.assertTrue(os.path.exists(rd + ".tar.gz"), run.stderr)
        with open(os.path.join(rd, "PROFILER_OUTPUT", "trace_view.json")) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        steps = [e for e in events if re.match(r"ProfilerStep#\d+$", str(e.get("name")))]
        ops = [e for e in events if str(e.get("name", "")).startswith("aten::")]
        self.assertGreater(len(steps), 0)
        self.assertGreater(len(ops), 0)
        db = sqlite3.connect(os.path.join(rd, "PROFILER_OUTPUT", "profiler.db"))
        self.assertGreater(len(db.execute("select name from sqlite_master").fetchall()), 0)
        # parse again, into tar.zst, then parse that archive
        again = self.run_prof("parse", "-q", "--archive", "tar.zst", rd)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertTrue(os.path.exists(rd + ".tar.zst"))
        shutil.rmtree(rd)
        unpacked = self.run_prof("parse", "-q", rd + ".tar.zst")
        self.assertEqual(unpacked.returncode, 0, unpacked.stderr)
        # the cache: 0700 directories, files of ours only
        for root, dirs, files in os.walk(self.cache):
            self.assertEqual(os.stat(root).st_mode & 0o777, 0o700, root)
            self.assertFalse([f for f in files if f.endswith(".tmp")], root)

    def test_many_at_once(self):
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home}
        procs = [subprocess.Popen([self.prof, "run", "-o", "out%d" % i, "--", "true"], env=env,
                                  cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for i in range(16)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            self.assertNotIn("replaced", err)
        names = []
        for root, _, files in os.walk(self.cache):
            names += [os.path.relpath(os.path.join(root, f), self.cache) for f in files]
        self.assertIn("lib/prof/libprof_agent.so", names)
        self.assertFalse([n for n in names if n.endswith(".tmp")], names)
        self.assertEqual(len(names), len(set(names)))

    def test_changed_file_replaced(self):
        self.assertEqual(self.run_prof("run", "--", "true").returncode, 0)
        agent = os.path.join(self.cache, "lib/prof/libprof_agent.so")
        hooks = os.path.join(self.cache, "share/prof/python/sitecustomize.py")
        with open(agent, "r+b") as f:
            f.truncate(100)
        with open(hooks, "a") as f:
            f.write("\nraise SystemExit('changed')\n")
        run = self.run_prof("run", "--", "true")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("libprof_agent.so differs from the one built in", run.stderr)
        self.assertIn("sitecustomize.py differs", run.stderr)
        with open(hooks) as f:
            self.assertNotIn("changed", f.read())
        self.assertGreater(os.path.getsize(agent), 100)
        again = self.run_prof("run", "--", "true")
        self.assertNotIn("differs", again.stderr)

    def test_link_refused(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(os.path.join(self.home, ".cache"))
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(self.home, ".cache", "prof"))
        run = self.run_prof("run", "--", "true")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn(os.path.join(self.home, ".cache", "prof") + " is a symbolic link",
                      run.stderr)
        self.assertEqual(os.listdir(elsewhere), [])

    @unittest.skipUnless(os.geteuid() == 0, "chown to another user needs root")
    def test_other_owner_refused(self):
        os.makedirs(self.cache, mode=0o700)
        os.chown(self.cache, 65534, 65534)
        run = self.run_prof("run", "--", "true")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn(self.cache + " is owned by another user", run.stderr)

    def test_home_unset_uses_tmp(self):
        tmp = os.path.join(self.tmp, "t")
        os.makedirs(tmp)
        run = subprocess.run([self.prof, "run", "--", "true"], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "TMPDIR": tmp}, cwd=self.dir,
                             timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(os.path.exists(os.path.join(
            tmp, "prof-%d" % os.geteuid(), self.build_id, "lib/prof/libprof_agent.so")))


if __name__ == "__main__":
    unittest.main()
