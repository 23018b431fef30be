"""paddle.profiler's step timer (its "benchmark"), for prof.paddle.

batch cost: the time from one step() to the next (from start() for the
first); reader cost: the time spent inside the DataLoader iterator's
__next__ (torch's _BaseDataLoaderIter, wrapped while the timer runs), as
paddle times its own DataLoader; ips: samples (step's num_samples) per
second of batch cost, or steps per second when a step gave no num_samples.
step_info() averages the steps since its previous call. stop() prints the
"Perf Summary" over the steps after the first SKIP, as paddle does, when
there are any.
"""
import functools
import sys
import time

SKIP = 10   # paddle leaves the first 10 steps out of its summary (warm-up)


class _Stat:
    def __init__(self):
        self.n, self.total, self.max, self.min = 0, 0.0, 0.0, float("inf")

    def add(self, v):
        self.n += 1
        self.total += v
        self.max = max(self.max, v)
        self.min = min(self.min, v)

    def avg(self):
        return self.total / self.n if self.n else 0.0


class StepTimer:
    def __init__(self):
        self.running = False
        self._wrapped = None
        self._reset_all()

    def _reset_all(self):
        self.steps = 0
        self.steps_mode = False          # a step without num_samples: ips in steps/s
        self._last = time.perf_counter()
        self._reset_window()
        self.reader, self.batch, self.speed = _Stat(), _Stat(), _Stat()
        self.samples = 0

    def _reset_window(self):
        self.w_reader, self.w_batch = _Stat(), _Stat()
        self.w_samples = 0

    def begin(self):
        self._reset_all()
        self.running = True
        self._wrapped = _wrap_next(self)

    def end(self):
        if not self.running:
            return
        self.running = False
        _unwrap_next(self._wrapped)
        self._wrapped = None
        _print_summary(self)

    def reader_done(self, seconds):
        if not self.running or seconds <= 0:
            return
        self.w_reader.add(seconds)
        if self.steps >= SKIP:
            self.reader.add(seconds)

    def step(self, num_samples=None):
        if not self.running:
            return
        now = time.perf_counter()
        cost, self._last = now - self._last, now
        self.steps += 1
        if num_samples is None:
            self.steps_mode = True
        self.w_batch.add(cost)
        self.w_samples += num_samples or 0
        if self.steps > SKIP and cost > 0:
            self.batch.add(cost)
            self.samples += num_samples or 0
            self.speed.add(1.0 / cost if self.steps_mode else (num_samples or 0) / cost)

    def ips_unit(self, unit):
        return "steps/s" if self.steps_mode else unit + "/s"

    def step_info(self, unit):
        text = ""
        reader, batch = self.w_reader.avg(), self.w_batch.avg()
        if reader:
            text += " reader_cost: %.5f s" % reader
        if batch:
            text += " batch_cost: %.5f s" % batch
            if self.steps_mode:
                ips = self.w_batch.n / self.w_batch.total
            else:
                ips = self.w_samples / self.w_batch.total
            if ips:
                text += " ips: %.3f %s" % (ips, self.ips_unit(unit))
        self._reset_window()
        return text


def _print_summary(t):
    if not t.batch.n:
        return
    ips_avg = (t.batch.n if t.steps_mode else t.samples) / t.batch.total
    print("Perf Summary".center(100, "="))
    if t.reader.n:
        print("Reader Ratio: %.3f%%" % (100.0 * t.reader.total / t.batch.total))
    print("Time Unit: s, IPS Unit: %s" % t.ips_unit("samples"))
    _row("", "avg", "max", "min")
    if t.reader.n:
        _row("reader_cost", *("%.5f" % v for v in (t.reader.avg(), t.reader.max, t.reader.min)))
    _row("batch_cost", *("%.5f" % v for v in (t.batch.avg(), t.batch.max, t.batch.min)))
    _row("ips", *("%.5f" % v for v in (ips_avg, t.speed.max, t.speed.min)))


def _row(*cells):
    print("| " + " | ".join(c.center(15) for c in cells) + " |")


def _wrap_next(timer):
    """Times each batch taken from a torch DataLoader iterator; None when
    torch's DataLoader is not imported."""
    mod = sys.modules.get("torch.utils.data.dataloader")
    cls = getattr(mod, "_BaseDataLoaderIter", None)
    inner = cls.__dict__.get("__next__") if cls is not None else None
    if inner is None:
        return None

    @functools.wraps(inner)
    def timed(it):
        t0 = time.perf_counter()
        try:
            return inner(it)
        finally:
            timer.reader_done(time.perf_counter() - t0)

    cls.__next__ = timed
    return cls, inner, timed


def _unwrap_next(wrapped):
    """Puts __next__ back unless someone wrapped it after us (then ours
    stays, idle: the timer no longer runs)."""
    if wrapped is None:
        return
    cls, inner, timed = wrapped
    if cls.__dict__.get("__next__") is timed:
        cls.__next__ = inner
