"""Run-directory archives: `prof run --archive`, `prof parse --archive`,
`prof parse ARCHIVE` (also after the run directory is gone), and hostile
archives refused with exit status 4."""
import io
import json
import os
import shutil
import subprocess
import tarfile
import unittest
import zipfile

from proftest import PROF, ProfTestCase, events, workload


def steps(trace_path):
    with open(trace_path) as f:
        trace = json.load(f)
    return sorted(int(e["name"].split("#")[1]) for e in events(trace, ph="X")
                  if e["name"].startswith("ProfilerStep#"))


def files_under(top):
    """Relative paths of the files and directories under top's parent."""
    parent = os.path.dirname(top)
    out = set()
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), parent))
    out.add(os.path.basename(top))
    return out


class Archive(ProfTestCase):
    def parse(self, *args):
        return subprocess.run([PROF, "parse", *args], capture_output=True, text=True,
                              timeout=120)

    def recorded(self, fmt):
        run = self.prof_run([workload("tx_steps"), "5", "1"], "--archive", fmt)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        arch = run.run_dir + "." + fmt
        self.assertIn("prof: archived %s into %s" % (run.run_dir, arch), run.stderr)
        self.assertTrue(os.path.isfile(arch))
        return run, arch

    def check_round_trip(self, run, arch, names):
        self.assertEqual(names, files_under(run.run_dir))
        shutil.rmtree(run.run_dir)
        p = self.parse(arch)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("extracted %s into %s" % (arch, run.run_dir), p.stderr)
        self.assertEqual(steps(run.output("trace_view.json")), [1, 2, 3, 4, 5])
        self.assertTrue(os.path.exists(run.output("parse.done")))

    def test_run_tar_gz_then_parse_the_archive(self):
        run, arch = self.recorded("tar.gz")
        with tarfile.open(arch) as t:
            members = t.getmembers()
        names = {m.name for m in members}
        self.assertIn(os.path.basename(run.run_dir) + "/PROFILER_OUTPUT/trace_view.json",
                      names)
        self.assertTrue(all(m.isfile() or m.isdir() for m in members))
        info = [m for m in members if m.name.endswith("/profiler_info.json")][0]
        self.assertEqual(info.mode & 0o777,
                         os.stat(run.path("profiler_info.json")).st_mode & 0o777)
        self.check_round_trip(run, arch, names)

    def test_run_zip_then_parse_the_archive(self):
        run, arch = self.recorded("zip")
        with zipfile.ZipFile(arch) as z:
            names = {n.rstrip("/") for n in z.namelist()}
        self.check_round_trip(run, arch, names)

    def test_no_parse_then_parse_archive(self):
        run = self.prof_run([workload("tx_steps"), "3", "1"], "--no-parse",
                            env={"PROF_OPTIONS": json.dumps({"archive": True})})
        self.assertEqual(run.rc, 0, run.stderr)
        arch = run.run_dir + ".tar.gz"
        self.assertIn("archived", run.stderr)
        self.assertFalse(os.path.exists(run.output("trace_view.json")))
        shutil.rmtree(run.run_dir)
        p = self.parse(arch)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(steps(run.output("trace_view.json")), [1, 2, 3])

    def test_parse_archive_option_and_name_taken(self):
        run = self.prof_run([workload("tx_steps"), "2", "1"], "--no-parse")
        p = self.parse("--archive", "zip", run.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        arch = run.run_dir + ".zip"
        self.assertIn("archived %s into %s" % (run.run_dir, arch), p.stderr)
        with zipfile.ZipFile(arch) as z:
            self.assertIn(os.path.basename(run.run_dir) + "/PROFILER_OUTPUT/parse.done",
                          z.namelist())
        # the run directory still exists: extracted into a fresh directory
        p = self.parse(arch)
        self.assertEqual(p.returncode, 0, p.stderr)
        where = p.stderr.split(" into ")[1].split("\n")[0]
        self.assertNotEqual(where, run.run_dir)
        self.assertEqual(steps(os.path.join(where, "PROFILER_OUTPUT", "trace_view.json")),
                         [1, 2])

    def test_bad_archive_option(self):
        p = self.parse("--archive", "rar", self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown format", p.stderr)
        r = subprocess.run([PROF, "run", "--archive", "rar", "--", "true"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("archive", r.stderr)

    def hostile(self, name, add):
        path = os.path.join(self.tmp, name)
        with tarfile.open(path, "w:gz") as t:
            add(t)
        before = set(os.listdir(self.tmp))
        p = self.parse(path)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(set(os.listdir(self.tmp)), before)
        return p.stderr

    def test_hostile_archives_refused(self):
        def file(t, n, data=b"x"):
            i = tarfile.TarInfo(n)
            i.size = len(data)
            t.addfile(i, io.BytesIO(data))

        def dotdot(t):
            file(t, "r_prof/raw/a")
            file(t, "r_prof/../../evil")
        err = self.hostile("dotdot_prof.tar.gz", dotdot)
        self.assertIn('refused: entry "r_prof/../../evil": a ".." component', err)
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.tmp), "evil")))

        def link(t):
            i = tarfile.TarInfo("r_prof/raw")
            i.type = tarfile.SYMTYPE
            i.linkname = "/etc"
            t.addfile(i)
        err = self.hostile("link_prof.tgz", link)
        self.assertIn('entry "r_prof/raw": a symbolic link', err)

        def fifo(t):
            i = tarfile.TarInfo("r_prof/f")
            i.type = tarfile.FIFOTYPE
            t.addfile(i)
        self.assertIn("a FIFO", self.hostile("fifo_prof.tar.gz", fifo))

        def two(t):
            file(t, "a_prof/x")
            file(t, "b_prof/x")
        self.assertIn("outside the top-level directory",
                      self.hostile("two_prof.tar.gz", two))

        garbage = os.path.join(self.tmp, "garbage_prof.zip")
        with open(garbage, "wb") as f:
            f.write(b"PK\x03\x04" + b"\x00garbage" * 100)
        p = self.parse(garbage)
        self.assertEqual(p.returncode, 4)
        self.assertIn("garbage_prof.zip: refused", p.stderr)


if __name__ == "__main__":
    unittest.main()
