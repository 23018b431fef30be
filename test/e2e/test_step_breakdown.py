"""step_trace_time.csv from a real run on the simulated device: a known
compute/communication overlap gives the Ascend breakdown. The sim runs in
real time, so a busy machine stretches tasks by up to a few ms: values are
checked within TOL, and the identities between columns exactly."""
import unittest

from proftest import ProfTestCase, workload

TOL = 4000.0  # us


class StepBreakdown(ProfTestCase):
    def test_overlap_and_receive_bubble(self):
        run = self.prof_run([workload("sim_overlap")], "--sampling-interval", "0")
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        rows = run.csv_rows("step_trace_time.csv")
        head, body = rows[0], rows[1:]
        self.assertEqual(len(body), 1, rows)
        r = dict(zip(head, body[0]))
        self.assertEqual(r["Device_id"], "0")
        self.assertEqual(r["Step"], "1")
        v = {k: float(x) for k, x in r.items() if k not in ("Device_id", "Step")}
        expect = {"Computing": 20000, "Communication": 25000, "Overlapped": 10000,
                  "Communication(Not Overlapped)": 15000, "Bubble": 5000,
                  "Communication(Not Overlapped and Exclude Receive)": 10000,
                  "Free": 0, "Stage": 30000}
        for k, want in expect.items():
            self.assertAlmostEqual(v[k], want, delta=TOL, msg="%s: %r" % (k, r))
        self.assertAlmostEqual(v["Overlapped"],
                               v["Communication"] - v["Communication(Not Overlapped)"], places=2)
        self.assertAlmostEqual(v["Communication(Not Overlapped and Exclude Receive)"],
                               max(v["Communication(Not Overlapped)"] - v["Bubble"], 0), places=2)
        self.assertGreaterEqual(v["Preparing"], 0)
        self.assertLess(v["Preparing"], TOL)


if __name__ == "__main__":
    unittest.main()
