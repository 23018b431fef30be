"""step_trace_time.csv from a real run on the simulated device: a known
compute/communication overlap gives the Ascend breakdown.

The sim runs in real time: a busy machine stretches tasks by up to a few ms
and may start one stream later than the other. So the breakdown is checked
exactly against the tasks' actual times in kernel_details.csv (the
algorithm), and the task durations against their nominal values within TOL
(the workload)."""
import unittest

from proftest import ProfTestCase, workload

TOL = 4000.0   # us
EXACT = 0.01   # us: rounding of the CSVs' 3 decimals


def union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(intervals):
    return sum(b - a for a, b in intervals)


def intersect(xs, ys):
    return [(max(a, c), min(b, d)) for a, b in xs for c, d in ys if max(a, c) < min(b, d)]


class StepBreakdown(ProfTestCase):
    def tasks(self, run):
        rows = run.csv_rows("kernel_details.csv")
        head = rows[0]
        out = {}
        for r in rows[1:]:
            d = dict(zip(head, r))
            start = float(d["Start Time(us)"])
            out[d["Name"]] = (d["Type"], start, start + float(d["Duration(us)"]))
        return out

    def test_overlap_and_receive_bubble(self):
        run = self.prof_run([workload("sim_overlap")], "--sampling-interval", "0")
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        rows = run.csv_rows("step_trace_time.csv")
        self.assertEqual(len(rows), 2, rows)
        r = dict(zip(rows[0], rows[1]))
        self.assertEqual((r["Device_id"], r["Step"]), ("0", "1"))
        v = {k: float(x) for k, x in r.items() if k not in ("Device_id", "Step")}

        t = self.tasks(run)
        kinds = sorted(k for k, _, _ in t.values())
        self.assertEqual(kinds, ["COMMUNICATION", "COMMUNICATION", "KERNEL", "MEMSET"], t)
        comp = union([(a, b) for k, a, b in t.values() if k == "KERNEL"])
        comm = union([(a, b) for k, a, b in t.values() if k == "COMMUNICATION"])
        recv = [(a, b) for n, (k, a, b) in t.items() if k == "COMMUNICATION" and "recv" in n]
        self.assertEqual(len(recv), 1, t)
        busy = union(comp + comm)
        overlapped = length(intersect(comp, comm))
        expect = {
            "Computing": length(comp),
            "Communication": length(comm),
            "Overlapped": overlapped,
            "Communication(Not Overlapped)": length(comm) - overlapped,
            "Bubble": length(recv),
            "Communication(Not Overlapped and Exclude Receive)":
                max(length(comm) - overlapped - length(recv), 0),
            # DB-mode Free: the gaps inside the step's first-to-last activity
            "Free": (busy[-1][1] - busy[0][0]) - length(busy),
            "Stage": (busy[-1][1] - busy[0][0]) - length(recv),
        }
        for k, want in expect.items():
            self.assertAlmostEqual(v[k], want, delta=EXACT * 4, msg="%s: %r vs %r" % (k, r, t))

        # the workload itself: 20 ms of compute, 20 + 5 ms of communication
        # back to back on one stream, 5 ms of it a receive
        self.assertAlmostEqual(v["Computing"], 20000, delta=TOL)
        self.assertAlmostEqual(v["Communication"], 25000, delta=TOL)
        self.assertAlmostEqual(v["Bubble"], 5000, delta=TOL)
        self.assertGreaterEqual(v["Preparing"], 0)


if __name__ == "__main__":
    unittest.main()
