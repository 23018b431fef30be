"""Stepping aside: the program starts a profiler of its own.

torch.profiler.profile, torch.autograd.profiler.profile, emit_nvtx/emit_itt
and the legacy profiler all go through torch.autograd's _prepare_profiler /
_enable_profiler / _enable_profiler_legacy. Each is wrapped so that, before
it runs, prof is told what starts:

  * the operators: torch's profiler is one per process, so prof's
    operator collection stops and never starts again (ops.py);
  * the device, when the profiler asks for device activity (CUDA, XPU,
    ...): CUPTI serves one client and prof holds it for the whole run
    (platform/agent/device/cuda/backend.c says why), so that profiler gets no
    device activity; the hooks say so at the end of the run.

prof's own calls of these functions are marked with `ours` (a per-thread
flag) and pass untouched.
"""
import threading

ours = threading.local()   # .on: the profiler call in progress is prof's


def watch(torch, profiler, on_start):
    """Wraps the profiler entry points; `on_start(what, device)` runs before
    the program's own profiler starts (device: it asks for device activity)."""
    targets = [(profiler, "_prepare_profiler"), (profiler, "_enable_profiler"),
               (torch.autograd, "_prepare_profiler"), (torch.autograd, "_enable_profiler"),
               (torch.autograd, "_enable_profiler_legacy")]
    legacy = getattr(torch.autograd, "profiler_legacy", None)
    if legacy is not None:
        targets.append((legacy, "_enable_profiler_legacy"))
    for module, name in targets:
        _watch(module, name, on_start)


def _watch(module, name, on_start):
    orig = getattr(module, name, None)
    if orig is None or getattr(orig, "_prof_watch", False):
        return
    what = "%s.%s" % (getattr(module, "__name__", "?"), name)

    def watched(*args, **kwargs):
        if not getattr(ours, "on", False):
            on_start(what, device_activity(args, kwargs))
        return orig(*args, **kwargs)

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
