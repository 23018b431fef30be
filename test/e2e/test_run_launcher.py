"""`prof run` as a launcher: exit status mirroring, command resolution,
signal forwarding, the process tree, configuration errors, the run directory
and profiler_info.json, the control page timeline and the host sampler."""
import glob
import json
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import time
import unittest

from proftest import PROF, ProfTestCase, Run, workload

HOST_SAMPLE = struct.Struct("<IIddQQQdQQ")   # struct raw_host_sample
RECORD = struct.Struct("<HHIQ")               # struct raw_record
CHUNK = struct.Struct("<IIQQQQQQ")            # struct raw_chunk_header
RAW_REC_HOST_SAMPLE = 14
RAW_HEADER_SIZE = 4096


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def read_host_raw(path):
    """The header fields the launcher sets and every host sample record."""
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:8]
    (version, _bo, header_size, chunk_size, clock, kind, pid, tid, _ppid,
     flags) = struct.unpack_from("<IIIIIIiiiI", data, 8)
    comm = data[120:184].split(b"\0")[0].decode()
    hdr = dict(magic=magic, version=version, chunk_size=chunk_size, clock=clock, kind=kind,
               pid=pid, tid=tid, flags=flags, comm=comm)
    samples = []
    off = header_size
    while off + CHUNK.size <= len(data):
        cmagic, _index, committed, _records = CHUNK.unpack_from(data, off)[:4]
        if cmagic != 0x4B4E4843:
            break
        pos, end = off + CHUNK.size, off + CHUNK.size + committed
        while pos < end:
            rtype, _fl, size, ts = RECORD.unpack_from(data, pos)
            if rtype == RAW_REC_HOST_SAMPLE:
                samples.append((ts, HOST_SAMPLE.unpack_from(data, pos + RECORD.size)))
            pos += size
        off += chunk_size
    return hdr, samples


class LauncherCase(ProfTestCase):
    def run_prof(self, args, env=None, umask=None, timeout=60):
        """prof run with raw arguments; the output dir is self.out."""
        self.out = os.path.join(self.tmp, "out")
        full_env = dict(os.environ)
        full_env.update(env or {})

        def pre():
            no_core()
            if umask is not None:
                os.umask(umask)
        proc = subprocess.run([PROF, "run", *args], capture_output=True, text=True,
                              env=full_env, timeout=timeout, preexec_fn=pre)
        return Run(proc, self.out)

    def run_cmd(self, cmd, *options, **kw):
        return self.run_prof(["-o", os.path.join(self.tmp, "out"), "--no-parse", *options,
                              "--", *cmd], **kw)

    def info(self, run):
        return run.json("profiler_info.json")

    def make_file(self, name, text, mode):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
        return p


class ExitStatus(LauncherCase):
    def test_zero_and_run_dir_announced(self):
        r = self.run_cmd(["true"])
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertIn("prof: recording into %s\n" % r.run_dir, r.stderr)
        self.assertEqual(r.stdout, "")   # prof's own words go to stderr only

    def test_exit_code_mirrored(self):
        r = self.run_cmd(["sh", "-c", "exit 3"])
        self.assertEqual(r.rc, 3, r.stderr)
        end = self.info(r)["end_info"]
        self.assertEqual(end["exit_code"], 3)
        self.assertIsNone(end["signal"])

    def test_command_not_found(self):
        r = self.run_cmd(["nosuchcmd", "arg"])
        self.assertEqual(r.rc, 127)
        self.assertEqual(r.stderr, "prof: nosuchcmd: command not found\n")
        self.assertFalse(os.path.exists(self.out), "created output before resolving")

    def test_not_executable(self):
        p = self.make_file("script.sh", "#!/bin/sh\nexit 0\n", 0o644)
        r = self.run_cmd([p])
        self.assertEqual(r.rc, 126)
        self.assertIn("prof: %s: permission denied" % p, r.stderr)
        r = self.run_cmd([self.tmp])
        self.assertEqual(r.rc, 126)
        self.assertIn("prof: %s: Is a directory" % self.tmp, r.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_exec_failure_reported_by_parent(self):
        p = self.make_file("garbage", "not a program\n", 0o755)
        r = self.run_cmd([p])
        self.assertEqual(r.rc, 126)
        self.assertIn("prof: %s: cannot execute: Exec format error" % p, r.stderr)

    def check_killed(self, sig, name):
        r = self.run_cmd(["sh", "-c", "kill -%s $$" % name[3:]])
        self.assertEqual(r.rc, -sig, r.stderr)   # prof died of it too, after its work
        self.assertIn("prof: sh killed by signal %d (%s)" % (sig, name), r.stderr)
        end = self.info(r)["end_info"]
        self.assertEqual((end["exit_code"], end["signal"], end["signal_name"]),
                         (None, sig, name))

    def test_killed_by_sigsegv(self):
        self.check_killed(signal.SIGSEGV, "SIGSEGV")

    def test_killed_by_sigkill(self):
        self.check_killed(signal.SIGKILL, "SIGKILL")


class TreeAndSignals(LauncherCase):
    def test_sigterm_reaches_child(self):
        ready, got = os.path.join(self.tmp, "ready"), os.path.join(self.tmp, "got")
        script = ('trap "echo term > %s; exit 0" TERM; touch %s; '
                  'while :; do sleep 0.05; done' % (got, ready))
        out = os.path.join(self.tmp, "out")
        p = subprocess.Popen([PROF, "run", "-o", out, "--no-parse", "--", "sh", "-c", script],
                             stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while not os.path.exists(ready) and time.time() < deadline:
            time.sleep(0.01)
        self.assertTrue(os.path.exists(ready), "child never started")
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        with open(got) as f:
            self.assertEqual(f.read(), "term\n")

    def test_waits_for_orphaned_grandchild(self):
        late = os.path.join(self.tmp, "late")
        t0 = time.monotonic()
        r = self.run_cmd(["sh", "-c", "(sleep 0.3; echo late > %s) & exit 0" % late])
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        with open(late) as f:   # written before prof returned
            self.assertEqual(f.read(), "late\n")

    def test_launcher_outside_the_tree_said(self):
        """`prof run -- srun ...` records srun, not the tasks slurmd starts:
        said at the end, with where prof goes instead (here a stand-in
        srun that runs its command locally)."""
        srun = os.path.join(self.tmp, "srun")
        with open(srun, "w") as f:
            f.write('#!/bin/sh\nexec "$@"\n')
        os.chmod(srun, 0o755)
        r = self.prof_run([srun, workload("tx_steps"), "2", "1"])
        self.assertEqual(r.rc, 0, r.stderr)
        notes = [l for l in r.stderr.splitlines() if l.startswith("prof: note:")]
        self.assertEqual(len(notes), 1, r.stderr)
        self.assertIn("srun runs its tasks under slurmd, not under prof: put prof inside, "
                      "`srun ... prof run -o DIR -- CMD`", notes[0])
        # MPI's launchers start their local ranks under prof: said only when
        # no step was seen
        mpirun = os.path.join(self.tmp, "mpirun")
        os.rename(srun, mpirun)
        r = self.prof_run([mpirun, workload("tx_steps"), "2", "1"])
        self.assertNotIn("prof: note:", r.stderr)
        r = self.prof_run([mpirun, "true"])
        self.assertIn("mpirun's ranks on other machines are not under prof", r.stderr)

    def test_prof_under_prof(self):
        """A prof run inside another (a script that runs prof itself, under
        `prof run`): the inner records the program and says whose tree it
        is in; its agent, set by the outer, is no other CUDA tool."""
        inner_out = os.path.join(self.tmp, "inner")
        r = self.prof_run([PROF, "run", "-o", inner_out, "--", workload("tx_steps"), "3", "1"])
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertIn("prof: note: this prof runs under another prof run, recording into "
                      "%s: the program is recorded here" % r.run_dir, r.stderr)
        self.assertNotIn("CUDA_INJECTION64_PATH", r.stderr)
        self.assertIn("prof: note: CMD is prof itself: that prof run records the program",
                      r.stderr)
        inner = Run(subprocess.CompletedProcess([], 0, "", ""), inner_out)
        self.assertEqual(len(inner.csv_rows("step_trace_time.csv")) - 1, 3)

    def test_child_environment(self):
        env = {"PROF_AGENT_STALE": "1", "LD_PRELOAD": "", "KEEP_ME": "yes"}
        r = self.run_cmd(["sh", "-c", "env"], env=env)
        self.assertEqual(r.rc, 0, r.stderr)
        seen = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
        agent = os.path.join(os.environ["PROF_BUILD"], "lib/prof/libprof_agent.so")
        preload = seen["LD_PRELOAD"].split(":")
        if "asan" in preload[0]:    # a PROF_SANITIZE build: the ASan runtime first
            preload = preload[1:]
        self.assertEqual(":".join(preload), os.path.realpath(agent))
        self.assertTrue(seen["PYTHONPATH"].endswith("share/prof/python"), seen["PYTHONPATH"])
        self.assertEqual(seen["PROF_AGENT_RUN_DIR"], r.run_dir)
        self.assertEqual(seen["PROF_AGENT_ACTIVITIES"], "CPU,DEVICE")
        self.assertIn(seen["PROF_AGENT_CLOCK"], ("tsc", "mono"))
        self.assertNotIn("PROF_AGENT_STALE", seen)
        self.assertEqual(seen["KEEP_ME"], "yes")
        if seen["PROF_AGENT_CLOCK"] == "tsc":
            self.assertGreater(int(seen["PROF_AGENT_TSC_HZ"]), 10**8)

    def test_activities_and_start_paused_reach_agent(self):
        r = self.run_cmd(["sh", "-c", "env"], "--activities", "CPU", "--start-paused")
        seen = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
        self.assertEqual(seen["PROF_AGENT_ACTIVITIES"], "CPU")
        self.assertEqual(seen["PROF_AGENT_START_PAUSED"], "1")


class ConfigErrors(LauncherCase):
    def check_refused(self, args, *needles, env=None):
        r = self.run_prof(["-o", os.path.join(self.tmp, "out"), *args, "--", "true"], env=env)
        self.assertEqual(r.rc, 2, r.stderr)
        self.assertTrue(r.stderr.startswith("prof: "), r.stderr)
        for n in needles:
            self.assertIn(n, r.stderr)
        self.assertFalse(os.path.exists(self.out), "created output despite a config error")

    def test_invalid_json_in_env(self):
        self.check_refused([], "PROF_OPTIONS", "invalid JSON", env={"PROF_OPTIONS": "{bad"})

    def test_unknown_key_in_file(self):
        p = self.make_file("cfg.json", '{"delay": 1, "no_such_key": true}', 0o644)
        self.check_refused(["--config", p], p, '"no_such_key"', "unknown key")

    def test_wrong_type(self):
        self.check_refused([], "PROF_OPTIONS", '"delay"', "got a string",
                           env={"PROF_OPTIONS": '{"delay": "abc"}'})

    def test_out_of_range(self):
        self.check_refused([], "PROF_OPTIONS", '"sampling_interval"', "out of range",
                           env={"PROF_OPTIONS": '{"sampling_interval": 999999}'})

    def test_bad_flag_values(self):
        self.check_refused(["--delay", "abc"], "--delay", '"delay"')
        self.check_refused(["--delay", "-1"], "--delay", '"delay"')
        self.check_refused(["--activities", "GPUZ"], "--activities", "GPUZ")
        self.check_refused(["--sampling-interval", "x"], "--sampling-interval")

    def test_flag_overrides_file_overrides_env(self):
        p = self.make_file("cfg.json", '{"sampling_interval": 30, "delay": 0.01}', 0o644)
        r = self.run_prof(["-o", os.path.join(self.tmp, "out"), "--no-parse", "--config", p,
                           "--sampling-interval", "40", "--", "true"],
                          env={"PROF_OPTIONS": '{"sampling_interval": 10, "duration": 5}'})
        self.assertEqual(r.rc, 0, r.stderr)
        cfg = self.info(r)["config"]
        self.assertEqual((cfg["sampling_interval"], cfg["delay"], cfg["duration"],
                          cfg["analyse"]), (40, 0.01, 5, False))

    def test_usage_errors(self):
        r = self.run_prof(["-o", os.path.join(self.tmp, "out")])
        self.assertEqual(r.rc, 2)
        self.assertIn("no command given", r.stderr)
        self.assertIn("usage: prof run", r.stderr)
        r = self.run_prof(["--bogus", "--", "true"])
        self.assertEqual(r.rc, 2)
        self.assertIn("unknown option '--bogus'", r.stderr)
        r = self.run_prof(["--delay"])
        self.assertEqual(r.rc, 2)
        self.assertIn("prof run: option '--delay' needs a value; see 'prof run --help'", r.stderr)

    def test_help_lists_options_and_keys(self):
        r = self.run_prof(["--help"])
        self.assertEqual(r.rc, 0)
        for opt in ("-o, --output DIR", "--config FILE", "--no-parse", "--delay SEC",
                    "--duration SEC", "--sampling-interval MS", "--start-paused",
                    "--activities LIST", "-h, --help"):
            self.assertIn(opt, r.stdout)
        for key in ("output_path", "schedule.wait", "sampling_interval", "export_type"):
            self.assertIn(key, r.stdout)
        self.assertIn("PROF_OPS_NVTX=0|1  PyTorch operators", r.stdout)


class RunDirectory(LauncherCase):
    def test_symlink_output_refused(self):
        target = os.path.join(self.tmp, "target")
        os.mkdir(target)
        link = os.path.join(self.tmp, "link")
        os.symlink(target, link)
        r = self.run_prof(["-o", link, "--no-parse", "--", "true"])
        self.assertEqual(r.rc, 1)
        self.assertIn("prof: output path %s is a symbolic link" % link, r.stderr)
        self.assertEqual(os.listdir(target), [])

    @unittest.skipIf(os.geteuid() == 0, "root may write anywhere")
    def test_unwritable_output_refused(self):
        ro = os.path.join(self.tmp, "ro")
        os.mkdir(ro, 0o555)
        r = self.run_prof(["-o", ro, "--no-parse", "--", "true"])
        self.assertEqual(r.rc, 1)
        self.assertIn("%s is not writable" % ro, r.stderr)

    def test_missing_agent_refused(self):
        bindir = os.path.join(self.tmp, "prefix", "bin")
        os.makedirs(bindir)
        prof = os.path.join(bindir, "prof")
        shutil.copy(PROF, prof)
        out = os.path.join(self.tmp, "out")
        proc = subprocess.run([prof, "run", "-o", out, "--", "true"], capture_output=True,
                              text=True, timeout=30)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("prof: agent library %s/../lib/prof/libprof_agent.so: "
                      "No such file or directory" % bindir, proc.stderr)
        self.assertFalse(os.path.exists(out))

    def test_modes_info_and_host_samples(self):
        r = self.run_cmd(["sleep", "0.5"], umask=0o077)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertRegex(os.path.basename(r.run_dir), r"^[^_]+_\d+_\d{17}_prof$")
        for d in (".", "raw", "raw/launcher", "logs"):
            self.assertEqual(stat.S_IMODE(os.lstat(r.path(d)).st_mode), 0o750, d)
        for f in ("profiler_info.json", "raw/control"):
            self.assertEqual(stat.S_IMODE(os.lstat(r.path(f)).st_mode), 0o640, f)
        info = self.check_info(r)
        self.check_host_raw(r, info)

    def check_info(self, r):
        info = self.info(r)
        self.assertEqual(info["command"], ["sleep", "0.5"])
        self.assertEqual(info["config"]["output_path"], self.out)
        self.assertFalse(info["config"]["analyse"])
        self.assertEqual(info["end_info"]["exit_code"], 0)
        self.assertGreaterEqual(info["end_info"]["duration_ns"], 0.5e9)
        self.assertIsInstance(info["child_pid"], int)
        self.assertIn(str(info["launcher_pid"]), os.path.basename(r.run_dir))
        clock = info["clock"]
        self.assertIn(clock["raw_clock"], ("tsc", "monotonic"))
        if clock["raw_clock"] == "tsc":
            self.assertGreater(clock["tsc_hz"], 1e8)
        self.assertGreater(clock["end"]["mono_ns"], clock["start"]["mono_ns"])
        self.assertGreater(clock["end"]["ticks"], clock["start"]["ticks"])
        self.assertGreaterEqual(info["end_info"]["streams"], 1)   # host.raw at least
        return info

    def check_host_raw(self, r, info):
        hdr, samples = read_host_raw(r.path("raw", "launcher", "host.raw"))
        self.assertEqual(hdr["magic"], b"PROFRAW\0")
        self.assertEqual((hdr["kind"], hdr["clock"], hdr["comm"]), (2, 1, "host sampler"))
        self.assertEqual(hdr["pid"], info["launcher_pid"])
        self.assertNotEqual(hdr["tid"], hdr["pid"])   # the sampler's own thread
        self.assertTrue(hdr["flags"] & 1, "host.raw not closed")
        # 0.5 s at 20 ms is 25 samples; leave room for a slow machine.
        self.assertGreaterEqual(len(samples), 15)
        self.assertLessEqual(len(samples), 40)
        ts = [t for t, _ in samples]
        gaps = [b - a for a, b in zip(ts, ts[1:])]
        self.assertTrue(all(g > 0 for g in gaps))
        self.assertAlmostEqual(sorted(gaps)[len(gaps) // 2] / 1e6, 20, delta=5)
        # the first may catch the child in exec (no RSS yet), the last the tree gone
        for _, s in samples[1:-1]:
            procs, threads, user, sys_, rss = s[:5]
            self.assertEqual(procs, 1)
            self.assertGreaterEqual(threads, 1)
            self.assertGreater(rss, 0)
            self.assertTrue(0 <= user <= 200 and 0 <= sys_ <= 200, s)
            self.assertGreater(s[9], 0)   # MemAvailable
        self.assertEqual(samples[0][1][2:4], (0.0, 0.0))   # the first has no deltas
        # sleep is idle (CPU time comes in 10 ms ticks: look at the mean)
        cpu = [s[2] + s[3] for _, s in samples]
        self.assertLess(sum(cpu) / len(cpu), 20, cpu)

    def test_host_samples_see_a_busy_tree(self):
        # The shell's `times` says the CPU its children really used: the
        # samples must add up to it, however busy the machine (a share of
        # a core would depend on the other tests running beside).
        r = self.run_cmd(["sh", "-c", "timeout 0.5 sh -c 'while :; do :; done'; st=$?; times; "
                          "exit $st"])
        self.assertEqual(r.rc, 124, r.stderr)   # timeout's own status, mirrored
        _, samples = read_host_raw(r.path("raw", "launcher", "host.raw"))
        # from when the tree is whole (a loaded machine may take a few
        # samples to start the inner shell) to before it ends
        whole = next((i for i, (_, s) in enumerate(samples) if s[0] == 3), len(samples))
        body = samples[max(whole, 2):-2]
        self.assertGreaterEqual(len(body), 10, samples)
        self.assertTrue(all(s[0] == 3 for _, s in body), body)   # sh, timeout and sh
        # `times`: the shell's user and system time, then its children's ("0m0.49s")
        used = sum(float(m) * 60 + float(sec) for part in r.stdout.split()[2:4]
                   for m, sec in [part.rstrip("s").split("m")])
        seen = sum((s[2] + s[3]) / 100 * (t - t0) / 1e9
                   for (t0, _), (t, s) in zip(samples, samples[1:]))
        self.assertGreater(used, 0.05, r.stdout)
        # ticks of 10 ms, a sample period at each end
        self.assertAlmostEqual(seen, used, delta=0.06 + 0.2 * used)

    def test_sampling_off(self):
        r = self.run_cmd(["true"], "--sampling-interval", "0")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertFalse(os.path.exists(r.path("raw", "launcher", "host.raw")))

    def test_host_usage_csv(self):
        out = os.path.join(self.tmp, "out")
        r = self.run_prof(["-o", out, "--", "sleep", "0.5"])
        self.assertEqual(r.rc, 0, r.stderr)
        csv_path = r.output("host_usage.csv")
        if not os.path.isdir(r.path("PROFILER_OUTPUT")):
            self.skipTest("PROFILER_OUTPUT absent: the parse is not built yet")
        self.assertIn("prof: wrote %s/PROFILER_OUTPUT (" % r.run_dir, r.stderr)
        rows = r.csv_rows("host_usage.csv")
        self.assertGreaterEqual(len(rows) - 1, 15, csv_path)


class DelayDuration(LauncherCase):
    def timeline(self, *options):
        r = self.run_cmd([workload("launcher_control"), "1000"], *options)
        self.assertEqual(r.rc, 0, r.stderr)
        self.stderr = r.stderr
        return [(float(t), int(rec), int(gen))
                for t, rec, gen in (l.split() for l in r.stdout.splitlines())]

    def test_records_from_start_without_delay(self):
        self.assertEqual([(rec, gen) for _, rec, gen in self.timeline()], [(1, 1)])
        self.assertNotIn("recording st", self.stderr)

    def test_delay_then_duration(self):
        tl = self.timeline("--delay", "0.3", "--duration", "0.3")
        self.assertEqual([(rec, gen) for _, rec, gen in tl], [(0, 1), (1, 2), (0, 3)], tl)
        # times are from the program's start, which follows prof's timer base
        self.assertAlmostEqual(tl[1][0], 300, delta=100)
        self.assertAlmostEqual(tl[2][0], 600, delta=100)
        # each said as it acts: a stop while CMD runs on is no hang
        self.assertIn("prof: recording starts (delay 0.3 s)\n", self.stderr)
        self.assertIn("prof: recording stopped (duration 0.3 s); %s runs on, and prof "
                      "parses when it ends (Ctrl-C ends it now)" % workload("launcher_control"),
                      self.stderr)
        self.assertLess(self.stderr.index("recording starts"),
                        self.stderr.index("recording stopped"))

    def test_duration_alone(self):
        tl = self.timeline("--duration", "0.2")
        self.assertEqual([(rec, gen) for _, rec, gen in tl], [(1, 1), (0, 2)], tl)
        self.assertAlmostEqual(tl[1][0], 200, delta=100)


if __name__ == "__main__":
    unittest.main(verbosity=2)
