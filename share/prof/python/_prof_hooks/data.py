"""DataLoader ranges, recorded through the agent (crash-safe, ~1 us a pair):

  * "DataLoader fetch" around each dataset fetch (the fetchers of
    torch.utils.data._utils.fetch): in worker processes, fork or spawn, this
    is what shows their work under their own pids; with num_workers=0 it
    shows the fetch in the main process;
  * "enumerate(DataLoader)#_BaseDataLoaderIter.__next__" (Kineto's name)
    around each batch the program takes from a DataLoader iterator.
"""
import functools
import sys

FETCH = b"DataLoader fetch"
NEXT = b"enumerate(DataLoader)#_BaseDataLoaderIter.__next__"


def _ranged(fn, name, agent, guard, before=None):
    push, pop = agent.range_push, agent.range_pop

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not guard.on:
            return fn(*args, **kwargs)
        try:
            if before is not None:
                before()
            push(name)
        except Exception as e:
            guard.fail(e)
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            pop()

    wrapper._prof_wrapped = True
    return wrapper


def _wrap(cls, attr, name, agent, guard, before=None):
    fn = cls.__dict__.get(attr) if cls is not None else None
    if fn is None or getattr(fn, "_prof_wrapped", False):
        return False
    setattr(cls, attr, _ranged(fn, name, agent, guard, before))
    return True


def install(agent, guard, before_fetch=None, before_next=None):
    """Returns the names of what was wrapped. before_fetch runs before each
    fetch (in workers), before_next before each batch taken."""
    done = []
    fetch = sys.modules.get("torch.utils.data._utils.fetch")
    for cls_name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        if _wrap(getattr(fetch, cls_name, None), "fetch", FETCH, agent, guard, before_fetch):
            done.append(cls_name + ".fetch")
    loader = sys.modules.get("torch.utils.data.dataloader")
    if _wrap(getattr(loader, "_BaseDataLoaderIter", None), "__next__", NEXT, agent, guard,
             before_next):
        done.append("_BaseDataLoaderIter.__next__")
    return done
