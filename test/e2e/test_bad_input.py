"""The README's "Bad input" table, row by row: each row id (B01, ...) has a
case here that gives prof that input; the test checks the exit status and
the message the table states (its `…` stand for variable parts), and that
the table and the cases name the same ids."""
import glob
import gzip
import io
import json
import os
import re
import shutil
import tempfile
import subprocess
import tarfile
import time
import unittest

from proftest import PROF, SRC, ProfTestCase, workload

README = os.path.join(SRC, "README")


def readme_rows():
    """{id: (message fragments, exit status)} from the README's table."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = text.split("\nBad input\n---------\n", 1)[1]
    section = re.split(r"\n[^\n]+\n-{3,}\n", section, maxsplit=1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*(B\d\d)\s*\|(.*)\|\s*$", line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(2).split(" | ")]
        assert len(cells) == 4, line
        frags = []
        for code in re.findall(r"`([^`]*)`", cells[2]):
            frags += [p.strip() for p in code.split("…") if p.strip()]
        status = int(re.match(r"\d+", cells[3]).group(0))
        assert m.group(1) not in rows, "duplicate row " + m.group(1)
        rows[m.group(1)] = (frags, status)
    return rows


CASES = {}


def case(row_id):
    def register(fn):
        CASES[row_id] = fn
        return fn
    return register


def tar_gz(path, add):
    with tarfile.open(path, "w:gz") as t:
        add(t)
    return path


def add_file(t, name, data=b"x"):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    t.addfile(i, io.BytesIO(data))


class BadInput(ProfTestCase):
    """Each case returns (exit status, what prof said: stderr, plus the
    dynamic log where that is where it speaks)."""

    def prof(self, *args, env=None, cwd=None, user=None):
        full = dict(os.environ)
        full.pop("PROF_OPTIONS", None)
        full.update(env or {})
        cmd = [PROF, *args]
        if user:
            cmd = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, env=full, cwd=cwd or self.tmp,
                           timeout=120)
        return p.returncode, p.stderr

    def run_true(self, *options, env=None):
        return self.prof("run", "-o", self.path("out"), *options, "--", "true", env=env)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def write(self, name, data):
        with open(self.path(name), "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return self.path(name)

    def recorded(self):
        """A run directory recorded with --no-parse; returns its path and
        its program's raw stream."""
        rc, err = self.prof("run", "-o", self.path("rec"), "--no-parse", "--",
                            workload("tx_steps"), "10", "0")
        self.assertEqual(rc, 0, err)
        run_dir = glob.glob(self.path("rec", "*_prof"))[0]
        stream = [p for p in glob.glob(os.path.join(run_dir, "raw", "*", "t*.raw"))
                  if "/launcher/" not in p][0]
        return run_dir, stream

    def nothing_launched(self):
        self.assertFalse(os.path.exists(self.path("out")))

    # configuration

    @case("B01")
    def b01(self):
        return self.run_true(env={"PROF_OPTIONS": "{bad"})

    @case("B02")
    def b02(self):
        return self.run_true(env={"PROF_OPTIONS": '{"nokey": 1}'})

    @case("B03")
    def b03(self):
        return self.run_true(env={"PROF_OPTIONS": '{"delay": "a"}'})

    @case("B04")
    def b04(self):
        return self.run_true(env={"PROF_OPTIONS": '{"sampling_interval": -5}'})

    @case("B22")
    def b22(self):
        return self.run_true(env={"PROF_OPS_NVTX": "yes"})

    @case("B05")
    def b05(self):
        return self.run_true("--config", self.path("missing.json"))

    @case("B06")
    def b06(self):
        return self.run_true("--config", self.tmp)

    @case("B07")
    def b07(self):
        return self.run_true("--config", self.write("bad.json", "[1"))

    @case("B08")
    def b08(self):
        return self.run_true("--config", self.write("array.json", "[1]"))

    @case("B09")
    def b09(self):
        return self.run_true("--delay", "-1")

    # command line

    @case("B10")
    def b10(self):
        return self.run_true("--bogus")

    @case("B11")
    def b11(self):
        rc, err = self.prof("run", "-o", self.path("out"), "--")
        rc2, err2 = self.prof("run", "-o", self.path("out"))
        self.assertEqual((rc2, err2), (rc, err))
        return rc, err

    @case("B12")
    def b12(self):
        return self.prof("bogus")

    @case("B13")
    def b13(self):
        return self.prof("run", "-o", self.path("out"), "--", "no_such_command_zz")

    @case("B14")
    def b14(self):
        return self.prof("run", "-o", self.path("out"), "--", self.path("no_such_file"))

    @case("B15")
    def b15(self):
        return self.prof("run", "-o", self.path("out"), "--", self.write("data.txt", "x"))

    @case("B16")
    def b16(self):
        return self.run_true("--archive", "rar")

    @case("B17")
    def b17(self):
        return self.prof("parse", "--archive", "rar", self.tmp)

    @case("B18")
    def b18(self):
        return self.prof("parse", "--step-list", "abc", self.tmp)

    @case("B19")
    def b19(self):
        return self.prof("parse", "--timeline-limit", "-1", self.tmp)

    @case("B20")
    def b20(self):
        return self.prof("parse", "--export-type", "csv", self.tmp)

    @case("B21")
    def b21(self):
        return self.prof("parse")

    # paths

    @case("B30")
    def b30(self):
        return self.prof("run", "-o", self.write("afile", "x"), "--", "true")

    @case("B31")
    def b31(self):
        return self.prof("run", "-o", os.path.join(self.write("afile", "x"), "sub"), "--", "true")

    @case("B32")
    def b32(self):
        os.mkdir(self.path("target"))
        os.symlink(self.path("target"), self.path("link"))
        r = self.prof("run", "-o", self.path("link"), "--", "true")
        self.assertEqual(os.listdir(self.path("target")), [])
        return r

    @case("B33")
    def b33(self):
        if os.geteuid() != 0:
            ro = self.path("ro")
            os.mkdir(ro, 0o555)
            return self.prof("run", "-o", ro, "--", "true")
        if not shutil.which("setpriv"):
            self.skipTest("root may write anywhere, and there is no setpriv to drop to nobody")
        # nobody must reach prof, its agent and the directory: the test tree
        # may sit under directories only root may enter, so it goes in /tmp
        base = tempfile.mkdtemp(prefix="prof-b33-", dir="/tmp")
        self.addCleanup(shutil.rmtree, base, True)
        os.chmod(base, 0o755)
        ro = os.path.join(base, "ro")
        os.mkdir(ro, 0o555)
        probe = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                "--clear-groups", PROF, "--version"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("nobody cannot run %s" % PROF)
        r = self.prof("run", "-o", ro, "--", "true", user="nobody")
        self.assertEqual(os.listdir(ro), [])
        return r

    @case("B34")
    def b34(self):
        r = self.run_true("--dynamic", self.write("afile", "x"))
        self.nothing_launched()
        return r

    # prof parse

    @case("B40")
    def b40(self):
        return self.prof("parse", self.path("missing"))

    @case("B41")
    def b41(self):
        return self.prof("parse", self.write("notes.txt", "x"))

    @case("B42")
    def b42(self):
        os.makedirs(self.path("notrun", "sub"))
        return self.prof("parse", self.path("notrun"))

    @case("B43")
    def b43(self):
        os.makedirs(self.path("empty", "raw"))
        return self.prof("parse", self.path("empty"))

    @case("B44")
    def b44(self):
        run_dir, stream = self.recorded()
        os.truncate(stream, 5000)
        return self.prof("parse", "-q", run_dir)

    @case("B45")
    def b45(self):
        run_dir, stream = self.recorded()
        with open(stream, "r+b") as f:
            f.seek(4096)
            f.write(b"\xff" * 16)
        return self.prof("parse", "-q", run_dir)

    @case("B46")
    def b46(self):
        run_dir, stream = self.recorded()
        with open(stream, "r+b") as f:
            f.write(b"\xff" * 16)
        return self.prof("parse", "-q", run_dir)

    @case("B47")
    def b47(self):
        run_dir, _ = self.recorded()
        for p in glob.glob(os.path.join(run_dir, "raw", "*", "*.raw")):
            os.truncate(p, 10)
        r = self.prof("parse", "-q", run_dir)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "PROFILER_OUTPUT", "parse.done")))
        return r

    @case("B48")
    def b48(self):
        run_dir, _ = self.recorded()
        os.mkdir(self.path("elsewhere"))
        os.symlink(self.path("elsewhere"), os.path.join(run_dir, "PROFILER_OUTPUT"))
        r = self.prof("parse", "-q", run_dir)
        self.assertEqual(os.listdir(self.path("elsewhere")), [])
        return r

    @case("B49")
    def b49(self):
        # PROF_TEST_NOMEM=K fails prof's K-th allocation; the first K
        # (from a few hundred on: the parse's) whose parse goes on
        run_dir, _ = self.recorded()
        for k in range(200, 4000, 37):
            rc, err = self.prof("parse", "-q", run_dir, env={"PROF_TEST_NOMEM": str(k)})
            self.assertIn(rc, (0, 3, 4), err)   # no crash, whatever failed
            if rc == 3:
                self.assertTrue(os.path.isdir(os.path.join(run_dir, "raw")))
                return rc, err
        self.fail("no allocation of the parse made it go on short of memory")

    # archives: nothing is left behind

    def hostile(self, add, name="r_prof.tar.gz", raw=None):
        d = self.path("arc")
        os.mkdir(d)
        path = os.path.join(d, name)
        if raw is not None:
            with open(path, "wb") as f:
                f.write(raw)
        else:
            tar_gz(path, add)
        r = self.prof("parse", path)
        self.assertEqual(os.listdir(d), [name])
        return r

    @case("B50")
    def b50(self):
        evil = self.path("evil")
        r = self.hostile(lambda t: (add_file(t, "r_prof/raw/a"), add_file(t, evil)))
        self.assertFalse(os.path.exists(evil))
        return r

    @case("B51")
    def b51(self):
        r = self.hostile(lambda t: (add_file(t, "r_prof/raw/a"), add_file(t, "r_prof/../../evil")))
        self.assertFalse(os.path.exists(self.path("evil")))
        return r

    @case("B52")
    def b52(self):
        def add(t):
            i = tarfile.TarInfo("r_prof/raw")
            i.type = tarfile.SYMTYPE
            i.linkname = "/etc"
            t.addfile(i)
        return self.hostile(add)

    @case("B53")
    def b53(self):
        def add(t):
            add_file(t, "r_prof/raw/a")
            i = tarfile.TarInfo("r_prof/raw/b")
            i.type = tarfile.LNKTYPE
            i.linkname = "r_prof/raw/a"
            t.addfile(i)
        return self.hostile(add)

    @case("B54")
    def b54(self):
        def add(t):
            i = tarfile.TarInfo("r_prof/null")
            i.type = tarfile.CHRTYPE
            i.devmajor, i.devminor = 1, 3
            t.addfile(i)
        return self.hostile(add)

    @case("B55")
    def b55(self):
        # a header that claims 17 GiB, and no such data: refused on the header
        i = tarfile.TarInfo("r_prof/raw/big.raw")
        i.size = 17 << 30
        raw = gzip.compress(i.tobuf(format=tarfile.GNU_FORMAT) + b"\0" * 4096)
        return self.hostile(None, raw=raw)

    @case("B56")
    def b56(self):
        return self.hostile(None, raw=b"hello" * 100)

    @case("B57")
    def b57(self):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            add_file(t, "r_prof/raw/a", bytes(range(256)) * 400)
        data = buf.getvalue()
        return self.hostile(None, raw=data[:len(data) // 2])

    @case("B58")
    def b58(self):
        return self.hostile(lambda t: (add_file(t, "r_prof/raw/a"), add_file(t, "r_prof/raw/a")))

    # prof stats

    @case("B60")
    def b60(self):
        run_dir, _ = self.recorded()
        return self.prof("stats", run_dir)

    @case("B61")
    def b61(self):
        return self.prof("stats", self.path("missing"))

    @case("B62")
    def b62(self):
        run_dir, _ = self.recorded()
        return self.prof("stats", "--view", "bogus", run_dir)

    @case("B65")
    def b65(self):
        run_dir, _ = self.recorded()   # --no-parse, then packed as --archive packs
        arc = run_dir + ".tar.gz"
        with tarfile.open(arc, "w:gz") as t:
            t.add(run_dir, arcname=os.path.basename(run_dir))
        return self.prof("stats", arc)

    @case("B66")
    def b66(self):
        return self.prof("stats", self.write("run.tar.zst", b"not an archive\n" * 10))

    def short_of_memory(self, args, status):
        """`prof ARGS` with each of its allocations failing in turn (every
        7th of the first 700): it prints what it prints without one, or
        says that memory ran out, with `status`; the first that says."""
        full = dict(os.environ)
        full.pop("PROF_OPTIONS", None)
        ref = subprocess.run([PROF, *args], capture_output=True, text=True, env=full)
        self.assertEqual(ref.returncode, 0, ref.stderr)
        said = None
        for k in range(1, 700, 7):
            full["PROF_TEST_NOMEM"] = str(k)
            p = subprocess.run([PROF, *args], capture_output=True, text=True, env=full)
            if p.returncode == 0:   # nothing it printed was lost, or it would say
                self.assertEqual((p.stdout, p.stderr), (ref.stdout, ref.stderr), k)
                continue
            self.assertEqual(p.returncode, status, p.stderr)
            self.assertIn("memory ran out 1 time: what it printed or wrote may be incomplete",
                          p.stderr)
            said = said or (p.returncode, p.stderr)
        self.assertTrue(said, "no allocation of %s failed" % args[0])
        return said

    @case("B63")
    def b63(self):
        run_dir, _ = self.recorded()
        self.assertEqual(self.prof("parse", "-q", run_dir)[0], 0)
        return self.short_of_memory(["stats", "--view", "all", run_dir], 1)

    @case("B64")
    def b64(self):
        run_dir, _ = self.recorded()
        self.assertEqual(self.prof("parse", "-q", run_dir)[0], 0)
        return self.short_of_memory(["diff", run_dir, run_dir], 4)

    # --dynamic edits: ignored, logged, the run goes on

    def dynamic_edit(self, edit):
        dyn = self.path("dyn")
        proc = subprocess.Popen([PROF, "run", "-o", self.path("out"), "--dynamic", dyn, "--",
                                 workload("tx_steps"), "40", "10"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cfg = os.path.join(dyn, "profiler_config.json")
        for _ in range(500):
            if os.path.exists(cfg):
                break
            time.sleep(0.01)
        time.sleep(0.05)
        with open(cfg + ".new", "w") as f:
            f.write(edit)
        os.rename(cfg + ".new", cfg)
        _, err = proc.communicate(timeout=120)
        with open(os.path.join(dyn, "prof_dynamic.log")) as f:
            log = f.read()
        self.assertNotIn("activation", log)   # the edit changed nothing
        return proc.returncode, err + log

    @case("B70")
    def b70(self):
        return self.dynamic_edit('{"active": "three"')

    @case("B71")
    def b71(self):
        return self.dynamic_edit('{"bogus_key": 1}')

    @case("B72")
    def b72(self):
        return self.dynamic_edit('{"active": 0}')

    @case("B73")
    def b73(self):
        return self.dynamic_edit('{"record_shapes": "yes"}')

    @case("B74")
    def b74(self):
        return self.dynamic_edit(json.dumps({"activities": ["XPU"]}))

    # the table itself

    def test_table_and_cases_agree(self):
        rows = readme_rows()
        self.assertGreater(len(rows), 40)
        self.assertEqual(sorted(set(rows) - set(CASES)), [], "README rows without a case")
        self.assertEqual(sorted(set(CASES) - set(rows)), [], "cases without a README row")
        for rid, (frags, _) in rows.items():
            self.assertTrue(frags, rid + ": no message in the table")


def make_test(row_id):
    def test(self):
        rows = readme_rows()
        if row_id not in rows:
            self.fail("%s is not in the README's Bad input table" % row_id)
        frags, status = rows[row_id]
        rc, said = CASES[row_id](self)
        self.assertEqual(rc, status, "%s: README says exit %d; prof said:\n%s"
                         % (row_id, status, said))
        for frag in frags:
            self.assertIn(frag, said, "%s: README's message fragment not in prof's" % row_id)
        if row_id < "B20":   # refused before anything was created or launched
            self.assertFalse(os.path.exists(self.path("out")), row_id)
    test.__name__ = "test_" + row_id
    return test


for _id in CASES:
    setattr(BadInput, "test_" + _id, make_test(_id))


if __name__ == "__main__":
    unittest.main()
