"""torch_npu.profiler.dynamic_profile: recording switched on while the job
runs by editing PATH/profiler_config.json (`prof run --dynamic PATH`'s
semantics: prof writes the template, each accepted edit records `active`
steps from `start_step` or the next step, logged in PATH/prof_dynamic.log).

    from prof import dynamic_profile as dp
    dp.init("./dyn")
    for batch in loader:
        train_step(batch)
        dp.step()

Under `prof run --dynamic PATH` init() joins the launcher's watch; under
`prof run` without it, the launcher is not watching and init() raises. In a
plain python it starts prof session watching PATH.
"""
import os
import sys

from . import _runtime

_rt = None


def init(path):
    global _rt
    path = os.path.abspath(path)
    if _rt is not None:
        return
    rt = _runtime.current()
    if rt is not None:
        if os.environ.get("PROF_AGENT_DYNAMIC") != "1":
            raise RuntimeError("prof.dynamic_profile.init(%r): this process runs under prof run "
                               "without --dynamic; run it as `prof run --dynamic %s -- ...`"
                               % (path, path))
    else:
        rt = _runtime.get(dynamic=path)
    _rt = rt
    hooks = sys.modules.get("_prof_hooks")
    if hooks is not None:
        hooks.explicit_step()


def step():
    """One step ended (the script's loop); activations count these."""
    if _rt is not None:
        _rt.step()
