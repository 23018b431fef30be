"""Uses every prof_tx function from Python; counts are fixed for the tests."""
import threading

import prof_tx

prof_tx.add_metadata("framework", "none")
prof_tx.add_metadata_json("config", {"layers": 2, "names": ["a", "b"]})


@prof_tx.range("decorated")
def work():
    prof_tx.mark("inside-decorated")


def worker():
    for _ in range(3):
        with prof_tx.range("py-worker"):
            pass


t = threading.Thread(target=worker)
t.start()
for _ in range(4):
    with prof_tx.range("py-step-body"):
        prof_tx.range_push("py-inner")
        work()
        prof_tx.range_pop()
    prof_tx.step()
t.join()
prof_tx.stop()
prof_tx.mark("while-stopped")
prof_tx.start()
prof_tx.mark("after-restart")
print("enabled", prof_tx.enabled())
