"""The recording path is re-entrant (issue 18 §3): a signal handler that
records while the same thread is in the middle of a record (tx_signal: a
20 µs SIGALRM marking from its handler, the main thread marking and
defining new names) must not corrupt the stream nor crash the program. A
nested call is dropped and counted lost: every mark the program asked for
is recorded or counted, the main thread's all recorded."""
import collections
import re
import unittest

from proftest import ProfTestCase, events, workload

N = 200000


class Reentry(ProfTestCase):
    def test_handler_records_while_main_records(self):
        run = self.prof_run([workload("tx_signal"), str(N)], "--sampling-interval", "0",
                            timeout=300)
        self.assertEqual(run.rc, 0, run.stderr)
        m = re.match(r"main (\d+) ranges (\d+) handler (\d+)$", run.stdout.strip())
        self.assertTrue(m, run.stdout)
        main, ranges, handler = (int(x) for x in m.groups())
        self.assertGreater(handler, 0)
        self.assertParsedClean(run)
        t = run.trace()
        marks = collections.Counter(e["name"] for e in events(t, ph="i"))
        # the main thread's records are whole: none was overwritten
        self.assertEqual(marks["main"], main)
        names = [e["name"] for e in events(t, ph="X") if e["name"].startswith("range ")]
        self.assertEqual(len(names), ranges)
        self.assertEqual(len(set(names)), ranges)
        # the handler's: recorded, or dropped as nested and counted
        sig = sum(v for k, v in marks.items() if k == "sig" or k.startswith("sig-"))
        lost = run.json("profiler_info.json")["end_info"]["lost"]
        print("\nreentry: handler %d, recorded %d, lost %d" % (handler, sig, lost))
        self.assertEqual(sig + lost, handler)


if __name__ == "__main__":
    unittest.main()
