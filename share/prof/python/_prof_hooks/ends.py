"""Where a process or a loop's thread ends without atexit seeing it.

  os._exit        skips atexit: multiprocessing's forked children end with
                  it (mp.Process ranks, DataLoader workers), and so do
                  programs that leave without tearing down (NCCL)
  a thread's end  a training loop run in a thread of its own (a server's,
                  Ray Train's) collects on that thread, and only that
                  thread can stop the collection

Each wrapper calls its callback first and never lets it raise.
"""
import os
import threading


def wrap_os_exit(before_exit):
    """os._exit(status) calls before_exit() first."""
    orig = os._exit
    if getattr(orig, "_prof_exit", False):
        return

    def _exit(status):
        try:
            before_exit()
        except BaseException:
            pass
        orig(status)

    _exit._prof_exit = True
    _exit.__doc__ = orig.__doc__
    os._exit = _exit


def wrap_thread_end(thread_ends):
    """thread_ends() runs on every Thread as it ends, before join() returns.
    Thread._bootstrap_inner, not run(): subclasses override run()."""
    cls = threading.Thread
    orig = getattr(cls, "_bootstrap_inner", None)
    if orig is None or getattr(orig, "_prof_thread", False):
        return

    def _bootstrap_inner(thread):
        try:
            orig(thread)
        finally:
            try:
                thread_ends()
            except BaseException:
                pass

    _bootstrap_inner._prof_thread = True
    cls._bootstrap_inner = _bootstrap_inner
