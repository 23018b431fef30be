"""Stepping aside: the program runs a profiler of its own.

torch.profiler.profile, torch.autograd.profiler.profile, emit_nvtx/emit_itt
and the legacy profiler all go through torch.autograd's _prepare_profiler /
_enable_profiler / _enable_profiler_legacy, and end through
_disable_profiler / _disable_profiler_legacy. Each is wrapped so that, before
a start runs, prof is told what starts:

  * the operators: torch's profiler is one per process, so prof's
    operator collection stops while the program's runs (ops.py), and
    starts again once the program's has ended (after its disable
    returned): a script that profiles a few steps for itself keeps prof's
    operators for all the others;
  * the device, when the profiler asks for device activity (CUDA, XPU,
    ...): CUPTI serves one client and prof holds it for the whole run
    (platform/agent/device/cuda/backend.c says why), so that profiler gets no
    device activity; the hooks say so at the end of the run.

prof's own calls of these functions are marked with `ours` (a per-thread
flag) and pass untouched.
"""
import threading

ours = threading.local()   # .on: the profiler call in progress is prof's


def watch(torch, profiler, on_start, on_end):
    """Wraps the profiler entry points; `on_start(what, device)` runs before
    the program's own profiler starts (device: it asks for device activity),
    `on_end(what)` once it has been switched off."""
    starts = [(profiler, "_prepare_profiler"), (profiler, "_enable_profiler"),
              (torch.autograd, "_prepare_profiler"), (torch.autograd, "_enable_profiler"),
              (torch.autograd, "_enable_profiler_legacy")]
    ends = [(profiler, "_disable_profiler"), (torch.autograd, "_disable_profiler"),
            (torch.autograd, "_disable_profiler_legacy")]
    legacy = getattr(torch.autograd, "profiler_legacy", None)
    if legacy is not None:
        starts.append((legacy, "_enable_profiler_legacy"))
        ends.append((legacy, "_disable_profiler_legacy"))
    for module, name in starts:
        _watch(module, name, lambda what, a, kw: on_start(what, device_activity(a, kw)), None)
    for module, name in ends:
        _watch(module, name, None, on_end)


def _watch(module, name, before, after):
    orig = getattr(module, name, None)
    if orig is None or getattr(orig, "_prof_watch", False):
        return
    what = "%s.%s" % (getattr(module, "__name__", "?"), name)

    def watched(*args, **kwargs):
        theirs = not getattr(ours, "on", False)
        if theirs and before:
            before(what, args, kwargs)
        result = orig(*args, **kwargs)
        if theirs and after:
            after(what)
        return result

    watched._prof_watch = True
    watched.__name__ = getattr(orig, "__name__", name)
    watched.__doc__ = getattr(orig, "__doc__", None)
    setattr(module, name, watched)


def device_activity(args, kwargs):
    """_prepare_profiler(config, activities) and _enable_profiler(config,
    activities, ...): does any activity name a device? The legacy profiler
    takes none (its CUDA mode times with CUDA events, not CUPTI)."""
    acts = kwargs.get("activities", args[1] if len(args) > 1 else None)
    if not acts:
        return False
    try:
        return any(str(getattr(a, "name", a)).rsplit(".", 1)[-1] != "CPU" for a in acts)
    except TypeError:
        return False
