"""Hooks never raise into the program: each hook body runs through a
Guard, which logs the first exception to the agent and switches that hook
off for the rest of the process (a hook that failed once would most likely
fail at every call, and a half-working hook is worse than none). The log
line is a notice: the user hears at the end of the run what stopped and
what that costs (`lost`)."""
import traceback


class Guard:
    def __init__(self, name, log, on_fail=None, lost=None):
        self.name = name
        self.lost = lost or "prof's %s hook is off in this process" % name
        self.on = True
        self._log = log
        self.on_fail = on_fail  # cleans up after the failure, if the hook needs it

    def call(self, fn, *args):
        if not self.on:
            return None
        try:
            return fn(*args)
        except Exception as e:
            self.fail(e)
            return None

    def fail(self, e):
        self.on = False
        where = ""
        tb = traceback.extract_tb(e.__traceback__)
        if tb:
            where = " at %s:%d" % (tb[-1].filename, tb[-1].lineno)
        self._log("notice: %s: the %s hook stopped after %s: %s%s (logs/agent-<pid>.log; "
                  "please report it)" % (self.lost, self.name, type(e).__name__, e, where))
        if self.on_fail is not None:
            try:
                self.on_fail()
            except Exception:
                pass
