"""prof annotation API for Python: marks, ranges and steps.

Under `prof run` the agent is preloaded into the interpreter and these
functions record through it; without prof every function is a silent no-op,
so a script may import this module unconditionally (keep share/prof/python
on PYTHONPATH, or wrap the import in try/except ImportError).

    import prof_tx
    with prof_tx.range("data"):
        batch = next(loader)
    with prof_tx.range("allreduce", domain="comm"):
        ...
    prof_tx.step()

Marks and ranges belong to a domain (`domain=`, as NVTX's and mstx's;
the default domain is named "default"): the configuration's
mstx_domain_include / mstx_domain_exclude keep or drop a domain's.
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
    if hasattr(lib, "prof_mark_domain"):  # an older agent: every domain is the default
        for name in ("prof_mark_domain", "prof_range_push_domain"):
            getattr(lib, name).argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    for name in ("prof_add_metadata", "prof_add_metadata_json"):
        getattr(lib, name).argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib


_lib = _load()
_domains = _lib is not None and hasattr(_lib, "prof_mark_domain")


def enabled():
    """True when recording goes to prof (the program runs under prof run)."""
    return _lib is not None


def _b(text):
    return text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)


def mark(message, domain=None):
    """An instant event on this thread, in `domain` (None: the default)."""
    if _lib:
        if domain and _domains:
            _lib.prof_mark_domain(_b(domain), _b(message))
        else:
            _lib.prof_mark(_b(message))


def range_push(name, domain=None):
    """Open a range on this thread, in `domain` (None: the default); ranges
    nest, whatever their domains."""
    if _lib:
        if domain and _domains:
            _lib.prof_range_push_domain(_b(domain), _b(name))
        else:
            _lib.prof_range_push(_b(name))


def range_pop():
    """Close the innermost open range of this thread."""
    if _lib:
        _lib.prof_range_pop()


class range:  # noqa: A001 - the API's name, as in nvtx.range
    """A range as a context manager or a decorator, in `domain` (None: the
    default):

        with prof_tx.range("forward"): ...

        @prof_tx.range("load", domain="data")
        def load(): ...
    """

    def __init__(self, name, domain=None):
        self.name = name
        self.domain = domain

    def __enter__(self):
        range_push(self.name, self.domain)
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
