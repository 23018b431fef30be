"""The seeds' experimental_config keys that prof acts on (issue 19 §3):
host_sys samples what it lists; gc_detect records Python's garbage
collections; mstx_domain_include / mstx_domain_exclude filter the domains
of prof_tx's marks and ranges."""
import json
import os
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PYTHON, ProfTestCase, events, workload  # noqa: E402

MB = 1 << 20

# Sends N MB to itself over loopback (TCP), then sleeps past a few samples.
LOOPBACK = textwrap.dedent("""
    import socket, sys, threading, time
    n = int(sys.argv[1]) << 20
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    got = [0]
    def rx():
        c, _ = srv.accept()
        while got[0] < n:
            d = c.recv(1 << 16)
            if not d:
                break
            got[0] += len(d)
    t = threading.Thread(target=rx)
    t.start()
    s = socket.create_connection(srv.getsockname())
    buf = b"x" * (1 << 16)
    for _ in range(n // len(buf)):
        s.sendall(buf)
    t.join()
    s.close()
    time.sleep(0.2)
    assert got[0] == n, got[0]
""")


class KeysCase(ProfTestCase):
    def script(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path


class HostSys(KeysCase):
    def run_host_sys(self, parts, *cmd):
        env = {"PROF_OPTIONS": json.dumps({"host_sys": parts})}
        r = self.prof_run(list(cmd), env=env)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertParsedClean(r)
        return r

    def test_network_counts_loopback_traffic(self):
        n = 16
        r = self.run_host_sys(["mem", "network"], PYTHON, self.script("lo.py", LOOPBACK), str(n))
        rows = r.csv_rows("host_network_usage.csv")
        self.assertEqual(rows[0], ["Device_id", "Netcard Speed(KB/s)", "Peak Used Speed(KB/s)",
                                   "Recommend Speed(KB/s)", "Interface", "Rx Bytes",
                                   "Rx Packets", "Tx Bytes", "Tx Packets"])
        lo = {row[4]: row for row in rows[1:]}["lo"]
        self.assertEqual(lo[0], "host")
        self.assertEqual(lo[1], "")                       # loopback: no rated speed
        self.assertGreaterEqual(int(lo[5]), n * MB)       # rx bytes, headers on top
        self.assertGreaterEqual(int(lo[7]), n * MB)
        self.assertGreater(int(lo[6]), 0)
        # 32 MB/s or more went through lo (rx + tx) during at least one sample
        self.assertGreater(float(lo[2]), 0)
        trace = r.trace()
        track = events(trace, ph="C", name="Network Usage: lo")
        self.assertGreater(max(e["args"]["rx KB/s"] for e in track), 0)
        self.assertEqual(track[-1]["args"], {"rx KB/s": 0, "tx KB/s": 0})   # idle at the end
        # cpu not listed: no CPU counters, empty CPU columns; mem there
        self.assertFalse(events(trace, ph="C", name="CPU Usage"))
        self.assertTrue(events(trace, ph="C", name="Memory Usage"))
        host = r.csv_rows("host_usage.csv")
        cpu_cols = [i for i, h in enumerate(host[0]) if "CPU" in h]
        self.assertEqual(len(cpu_cols), 3)
        self.assertTrue(all(row[i] == "" for row in host[1:] for i in cpu_cols))
        self.assertTrue(all(row[3] != "" for row in host[1:]))   # RSS
        self.assertFalse(os.path.exists(r.output("host_disk_usage.csv")))

    def test_default_is_cpu_and_mem(self):
        r = self.prof_run(["sleep", "0.2"])
        self.assertEqual(r.rc, 0, r.stderr)
        trace = r.trace()
        self.assertTrue(events(trace, ph="C", name="CPU Usage"))
        self.assertTrue(events(trace, ph="C", name="Memory Usage"))
        self.assertFalse(events(trace, ph="C", name="Disk Usage"))
        self.assertFalse([e for e in events(trace, ph="C")
                          if e["name"].startswith("Network Usage")])
        for f in ("host_network_usage.csv", "host_disk_usage.csv"):
            self.assertFalse(os.path.exists(r.output(f)), f)

    def test_disk_alone(self):
        f = os.path.join(self.tmp, "f")
        r = self.run_host_sys(["disk"], "sh", "-c", "head -c 1000000 /dev/zero > %s; sleep 0.1" % f)
        trace = r.trace()
        self.assertTrue(events(trace, ph="C", name="Disk Usage"))
        for name in ("CPU Usage", "Memory Usage"):
            self.assertFalse(events(trace, ph="C", name=name), name)
        rows = r.csv_rows("host_disk_usage.csv")
        self.assertEqual(rows[0], ["Device_id", "Peak Disk Read(KB/s)", "Recommend Disk Read(KB/s)",
                                   "Peak Disk Write(KB/s)", "Recommend Disk Write(KB/s)"])
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[1][0], "host")

    def test_nothing_listed_samples_nothing(self):
        r = self.run_host_sys([], "true")
        self.assertFalse(os.path.exists(r.path("raw", "launcher", "host.raw")))


# K explicit collections with the automatic ones off, then one on a thread
# of its own; each finds the cycle made for it.
COLLECTS = textwrap.dedent("""
    import gc, sys, threading
    gc.disable()
    def one():
        x = []
        x.append(x)
        del x
        assert gc.collect() >= 1
    for _ in range(int(sys.argv[1])):
        one()
    t = threading.Thread(target=one)
    t.start()
    t.join()
""")


class GcDetect(KeysCase):
    def collects(self, k, options):
        env = {"PROF_OPTIONS": json.dumps(options)}
        r = self.prof_run([PYTHON, self.script("gc.py", COLLECTS), str(k)], env=env)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertParsedClean(r)
        return r

    def test_each_collection_is_a_range(self):
        k = 7
        r = self.collects(k, {"gc_detect": True})
        gcs = events(r.trace(), ph="X", cat="GC")
        self.assertEqual(len(gcs), k + 1, gcs)
        self.assertTrue(all(e["name"] == "GC" for e in gcs))
        self.assertTrue(all(e["args"]["generation"] == 2 for e in gcs))   # gc.collect()
        self.assertTrue(all(e["args"]["collected"] >= 1 for e in gcs), gcs)
        self.assertTrue(all(e["args"]["uncollectable"] == 0 for e in gcs))
        pid = gcs[0]["pid"]
        tids = [e["tid"] for e in gcs]
        self.assertEqual(tids[:k], [pid] * k)              # the main thread
        self.assertNotEqual(tids[k], pid)                  # the thread's own
        rows = r.csv_rows("gc_record.csv")
        self.assertEqual(rows[0], ["Process ID", "Thread ID", "Start Time(us)", "Duration(us)",
                                   "Generation", "Collected", "Uncollectable"])
        self.assertEqual(len(rows) - 1, k + 1)
        self.assertEqual(sorted(float(row[2]) for row in rows[1:]),
                         sorted(float(e["ts"]) for e in gcs))

    def test_off_by_default(self):
        r = self.collects(3, {})
        self.assertFalse(events(r.trace(), ph="X", cat="GC"))
        self.assertFalse(os.path.exists(r.output("gc_record.csv")))

    def test_paused_records_none(self):
        r = self.collects(3, {"gc_detect": True, "start_paused": True})
        self.assertFalse(events(r.trace(), ph="X", cat="GC"))


def annotations(trace):
    """{(name, domain or None)} of the user annotations, each with its count."""
    out = {}
    for e in events(trace, cat="user_annotation"):
        if e["ph"] == "e":
            continue
        key = (e["name"], e.get("args", {}).get("domain"))
        out[key] = out.get(key, 0) + 1
    return out


class MstxDomains(KeysCase):
    N = 4

    def domains_run(self, options, cmd=None):
        env = {"PROF_OPTIONS": json.dumps(options)}
        return self.prof_run(cmd or [workload("tx_domains"), str(self.N)], env=env)

    def expect(self, domains):
        """What tx_domains records of `domains` ("a", "b", None)."""
        out = {}
        for d in domains:
            tag = d or "default"
            for kind in "mrx":
                out[("%s-%s" % (kind, tag), d)] = self.N
        return out

    def check(self, options, domains):
        r = self.domains_run(options)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertParsedClean(r)
        self.assertEqual(annotations(r.trace()), self.expect(domains))

    def test_every_domain_by_default(self):
        self.check({}, ["a", "b", None])

    def test_include_keeps_only_those(self):
        self.check({"mstx_domain_include": ["a"]}, ["a"])

    def test_exclude_drops_only_those(self):
        self.check({"mstx_domain_exclude": ["b"]}, ["a", None])

    def test_default_domain_by_name(self):
        self.check({"mstx_domain_include": ["default", "b"]}, ["b", None])

    def test_both_lists_exit_2(self):
        r = self.domains_run({"mstx_domain_include": ["a"], "mstx_domain_exclude": ["b"]})
        self.assertEqual(r.rc, 2)
        self.assertIn('keys "mstx_domain_include" and "mstx_domain_exclude"', r.stderr)
        self.assertIsNone(r.run_dir)   # nothing launched, nothing made

    def test_python_domains(self):
        script = self.script("dom.py", textwrap.dedent("""
            import prof_tx
            for d in ("a", "b", None):
                with prof_tx.range("r-%s" % (d or "default"), domain=d):
                    prof_tx.mark("m-%s" % (d or "default"), domain=d)
        """))
        r = self.domains_run({"mstx_domain_exclude": ["a"]}, [PYTHON, script])
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(annotations(r.trace()), {("r-b", "b"): 1, ("m-b", "b"): 1,
                                                  ("r-default", None): 1,
                                                  ("m-default", None): 1})

    def test_prof_own_annotations_stay(self):
        """The PyTorch hooks' marks and ranges are prof's, not the
        program's: a domain filter leaves them (and the steps they find)."""
        script = self.script("train.py", textwrap.dedent("""
            import prof_tx
            try:
                import torch
            except ImportError:
                raise SystemExit(77)
            m = torch.nn.Linear(4, 1)
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            for i in range(3):
                with prof_tx.range("fwd", domain="a"):
                    loss = m(torch.randn(8, 4)).sum()
                prof_tx.mark("not-a")
                loss.backward()
                opt.step()
                opt.zero_grad()
        """))
        r = self.domains_run({"mstx_domain_include": ["a"]}, [PYTHON, script])
        if r.rc == 77:
            self.skipTest("%s cannot import torch" % PYTHON)
        self.assertEqual(r.rc, 0, r.stderr)
        seen = annotations(r.trace())
        self.assertEqual(seen[("fwd", "a")], 3)
        self.assertNotIn(("not-a", None), seen)
        self.assertEqual(seen[("Optimizer.__init__#SGD.__init__", None)], 1)
        self.assertEqual(sorted(n for n, _ in seen if n.startswith("ProfilerStep#")),
                         ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
