"""The install layout, `prof` found relative to itself, and the pkg-config
file: install into a fresh prefix, build the example against it, run it."""
import os
import re
import shutil
import subprocess

from proftest import BUILD, SRC, ProfTestCase

import unittest


class Install(ProfTestCase):
    def test_install_prefix_works(self):
        prefix = os.path.join(self.tmp, "prefix")
        out = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        for rel in ("bin/prof", "lib/prof/libprof_agent.so", "include/prof/prof_tx.h",
                    "lib/libprof_tx.so", "lib/pkgconfig/prof-tx.pc",
                    "share/prof/python/prof_tx.py", "share/prof/examples/train_demo.c"):
            self.assertTrue(os.path.exists(os.path.join(prefix, rel)), rel)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "prof-tx"], env=env,
                               capture_output=True, text=True, check=True).stdout.split()
        self.assertIn("-lprof_tx", flags)
        exe = os.path.join(self.tmp, "train_demo")
        subprocess.run(["cc", "-o", exe, os.path.join(SRC, "share/prof/examples/train_demo.c"),
                        *flags, "-lpthread", "-Wl,-rpath," + os.path.join(prefix, "lib")],
                       check=True, timeout=120)
        # Move the prefix: prof must find its agent relative to itself.
        moved = os.path.join(self.tmp, "moved")
        shutil.move(prefix, moved)
        exe_env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(moved, "lib"))
        out_dir = os.path.join(self.tmp, "out")
        run = subprocess.run([os.path.join(moved, "bin", "prof"), "run", "-o", out_dir, "--", exe, "3"],
                             capture_output=True, text=True, env=exe_env, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("train_demo: 3 steps done", run.stdout)
        runs = [d for d in os.listdir(out_dir) if d.endswith("_prof")]
        self.assertEqual(len(runs), 1)
        trace = os.path.join(out_dir, runs[0], "PROFILER_OUTPUT", "trace_view.json")
        with open(trace) as f:
            text = f.read()
        self.assertEqual(len(re.findall(r'"ProfilerStep#\d+"', text)), 3)


class VersionAndHelp(ProfTestCase):
    def prof(self, *args):
        return subprocess.run([os.path.join(BUILD, "bin", "prof"), *args], capture_output=True,
                              text=True, timeout=30)

    def test_version_lists_features(self):
        out = self.prof("--version")
        self.assertEqual(out.returncode, 0)
        self.assertRegex(out.stdout, r"^prof \d+\.\d+\.\d+\n")
        self.assertIn("features:", out.stdout)

    def test_help_lists_commands(self):
        out = self.prof("--help")
        self.assertEqual(out.returncode, 0)
        for cmd in ("run", "parse"):
            self.assertRegex(out.stdout, r"\n  %s " % cmd)

    def test_run_help_matches_readme(self):
        """Every flag the README documents for `prof run` is in --help, and back."""
        help_flags = set(re.findall(r"(--[a-z][a-z-]+)", self.prof("run", "--help").stdout))
        with open(os.path.join(SRC, "README")) as f:
            readme = f.read()
        section = readme.split("### prof run options")[1].split("###")[0]
        readme_flags = set(re.findall(r"(--[a-z][a-z-]+)", section))
        self.assertTrue(readme_flags, "README has no prof run options section")
        self.assertEqual(readme_flags, help_flags)

    def test_unknown_command(self):
        out = self.prof("frobnicate")
        self.assertEqual(out.returncode, 2)
        self.assertIn("'frobnicate' is not a prof command", out.stderr)


if __name__ == "__main__":
    unittest.main()
