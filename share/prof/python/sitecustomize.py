"""prof's start-up hook for Python programs run under `prof run`.

`prof run` puts this directory first on PYTHONPATH, so Python imports this
module at start-up instead of any other `sitecustomize`. It does two cheap
things and nothing more:

  * runs the `sitecustomize` it hides (the next one on sys.path), so the
    program sees the start-up it would have seen without prof;
  * under prof only (PROF_AGENT_RUN_DIR set), puts a finder on sys.meta_path
    that waits for `import torch` to finish and then hands the module to
    the `_prof_hooks` package, which does the real work (steps, operators,
    DataLoader ranges). Nothing heavy is imported before that moment, so a
    program that never imports torch pays a name comparison per import;
  * with gc_detect (PROF_FW_GC in PROF_AGENT_FW_FLAGS), reports garbage
    collections from the start (_prof_hooks/gc_hook.py), torch or not.

Any failure here is swallowed: a profiler must never stop a program from
starting.
"""
import os
import sys


def _chain():
    """Runs the next `sitecustomize` on sys.path, the one we hide."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest, seen_here = [], False
    for d in sys.path:
        if not seen_here:
            seen_here = os.path.abspath(d or ".") == here
            continue
        rest.append(d)
    if not rest:
        return
    # The import system's own PathFinder, already loaded: importing
    # importlib.machinery would cost more than all the rest of this module.
    boot = sys.modules.get("_frozen_importlib_external")
    if boot is None:
        import importlib.machinery as boot
    spec = boot.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    # Registered under its own name while it runs, so that code in it that
    # looks itself up in sys.modules finds itself; we stay `sitecustomize`.
    mod = type(sys)("sitecustomize")
    mod.__file__ = spec.origin
    mod.__spec__ = spec
    mod.__loader__ = spec.loader
    sys.modules.setdefault("_prof_chained_sitecustomize", mod)
    try:
        spec.loader.exec_module(mod)
    except Exception as err:  # what site.py says when a sitecustomize fails
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                         "%s: %s\n" % (err.__class__.__name__, err))


def _torch_imported(module):
    try:
        import _prof_hooks
        _prof_hooks.install(module)
    except Exception:
        pass  # _prof_hooks logs its own failures to the agent


class _TorchFinder:
    """A sys.meta_path finder that lets the real finders find `torch` and
    wraps the loader's exec_module, so `_torch_imported` runs right after
    torch/__init__.py has finished, before the program's next line."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        try:
            sys.meta_path.remove(self)  # once is enough, and no recursion
        except ValueError:
            pass
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        orig = getattr(loader, "exec_module", None)
        if orig is None:
            return spec

        def exec_module(module):
            try:
                del loader.exec_module  # back to the class's method for later modules
            except AttributeError:
                pass
            orig(module)
            _torch_imported(module)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            pass  # a loader that takes no attributes: no hooks, the program runs
        return spec


_PROF_FW_GC = 0x80  # lib/common/agent_env.h


def _gc_detect():
    try:
        flags = int(os.environ.get("PROF_AGENT_FW_FLAGS") or 0)
    except ValueError:
        return
    if not flags & _PROF_FW_GC:
        return
    try:
        from _prof_hooks import agent, gc_hook
        a = agent.load()
        if a is not None and not gc_hook.install(a):
            a.log("notice: gc_detect: the agent takes no garbage collections; none recorded")
    except Exception:
        pass


def _main():
    try:
        _chain()
    except Exception:
        pass
    if not os.environ.get("PROF_AGENT_RUN_DIR"):
        return
    _gc_detect()
    if "torch" in sys.modules:  # the chained sitecustomize imported it
        _torch_imported(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchFinder())


_main()
