"""prof annotation API for Python: marks, ranges and steps.

Under `prof run` the agent is preloaded into the interpreter and these
functions record through it; without prof every function is a silent no-op,
so a script may import this module unconditionally (keep share/prof/python
on PYTHONPATH, or wrap the import in try/except ImportError).

    import prof_tx
    with prof_tx.range("data"):
        batch = next(loader)
    prof_tx.step()
"""
import ctypes
import functools
import json
import os
import sys

__all__ = ["mark", "range_push", "range_pop", "range", "step", "start", "stop",
           "add_metadata", "add_metadata_json", "enabled"]


def _load():
    # The agent is inert without PROF_AGENT_RUN_DIR; so are we.
    if not os.environ.get("PROF_AGENT_RUN_DIR"):
        return None
    try:
        lib = ctypes.CDLL(None)  # the preloaded agent's symbols are global
        lib.prof_mark
    except (OSError, AttributeError):
        return None
    for name in ("prof_mark", "prof_range_push"):
        getattr(lib, name).argtypes = [ctypes.c_char_p]
    lib.prof_range_pop.argtypes = []
    for name in ("prof_add_metadata", "prof_add_metadata_json"):
        getattr(lib, name).argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib


_lib = _load()


def enabled():
    """True when recording goes to prof (the program runs under prof run)."""
    return _lib is not None


def _b(text):
    return text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)


def mark(message):
    """An instant event on this thread."""
    if _lib:
        _lib.prof_mark(_b(message))


def range_push(name):
    """Open a range on this thread; ranges nest."""
    if _lib:
        _lib.prof_range_push(_b(name))


def range_pop():
    """Close the innermost open range of this thread."""
    if _lib:
        _lib.prof_range_pop()


class range:  # noqa: A001 - the API's name, as in nvtx.range
    """A range as a context manager or a decorator:

        with prof_tx.range("forward"): ...

        @prof_tx.range("load")
        def load(): ...
    """

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        range_push(self.name)
        return self

    def __exit__(self, *exc):
        range_pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


def _tell_hooks(what):
    # prof's PyTorch hooks (share/prof/python/_prof_hooks), when loaded: explicit
    # steps replace the optimizer-detected ones, and torch operators start and
    # stop with start()/stop() rather than at the next step.
    hooks = sys.modules.get("_prof_hooks")
    if hooks is not None:
        getattr(hooks, what)()


def step():
    """A training or inference step ends here; the next begins. Under prof's
    PyTorch hooks, from the first call on, Optimizer.step() no longer ends
    steps: the program's own steps do."""
    if _lib:
        _lib.prof_step()
        _tell_hooks("explicit_step")


def start():
    """Resume recording in this process."""
    if _lib:
        _lib.prof_start()
        _tell_hooks("recording_changed")


def stop():
    """Pause recording in this process."""
    if _lib:
        _lib.prof_stop()
        _tell_hooks("recording_changed")


def add_metadata(key, value):
    """A key/value pair for profiler_metadata.json; value is text."""
    if _lib:
        _lib.prof_add_metadata(_b(key), _b(str(value)))


def add_metadata_json(key, obj):
    """A key and any JSON-serialisable object (or a JSON text)."""
    if _lib:
        text = obj if isinstance(obj, str) else json.dumps(obj)
        _lib.prof_add_metadata_json(_b(key), _b(text))
