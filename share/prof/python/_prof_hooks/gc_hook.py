"""gc_detect: Python's garbage collections as ranges on the thread that ran
them ("GC" in trace_view.json, a row each in gc_record.csv), reported to
the agent from gc.callbacks: at "start" the generation, at "stop" what
was collected and what could not be. Installed by sitecustomize at
start-up when the run asks for it (PROF_FW_GC in PROF_AGENT_FW_FLAGS), in
every Python process, torch or not.

A callback costs a ctypes call per phase (about a microsecond); the agent
records only while recording. A callback that fails takes itself out and
says so in the agent's log: an exception from a gc callback would be
printed on the program's stderr at every collection.
"""
import gc

START, STOP = 1, 2  # enum raw_gc_phase (lib/raw/raw_format.h)


def install(agent):
    """Appends the callback; False when the agent cannot take collections."""
    report = agent.gc
    if report is None:
        return False

    def on_gc(phase, info):
        try:
            if phase == "start":
                report(START, info["generation"], 0, 0)
            else:
                report(STOP, info["generation"], info["collected"], info["uncollectable"])
        except Exception as e:  # never again, and never into the program
            try:
                gc.callbacks.remove(on_gc)
            except ValueError:
                pass
            agent.log("notice: garbage collections are no longer recorded in this process: "
                      "the gc hook stopped after %s: %s (please report it)"
                      % (type(e).__name__, e))

    gc.callbacks.append(on_gc)
    return True
