"""tx_killme.py WHERE N: the kill matrix's Python row (test_kill_matrix.py).

The main thread marks "py-main-<k>" and a worker thread "py-w-<k>",
k = 0..N-1; once both are done a spinner thread marks "py-spin-<k>" without
end, and when it has made at least 100 marks the process leaves by
os._exit(5): from the main thread (WHERE "main") or from a new thread
(WHERE "thread") while the spinner records. N = 0: os._exit(5) at once.
"""
import os
import sys
import threading

import prof_tx

SPIN_MIN = 100


def marks(prefix, n):
    for k in range(n):
        prof_tx.mark("%s-%d" % (prefix, k))


def spinner(spun):
    k = 0
    while True:
        prof_tx.mark("py-spin-%d" % k)
        k += 1
        if k == SPIN_MIN:
            spun.set()


def main():
    where, n = sys.argv[1], int(sys.argv[2])
    if n > 0:
        w = threading.Thread(target=marks, args=("py-w", n))
        w.start()
        marks("py-main", n)
        w.join()
        spun = threading.Event()
        threading.Thread(target=spinner, args=(spun,), daemon=True).start()
        spun.wait()
    if where == "thread":
        t = threading.Thread(target=os._exit, args=(5,))
        t.start()
        t.join()
    os._exit(5)


main()
