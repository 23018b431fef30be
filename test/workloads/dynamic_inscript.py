"""torch_npu's dynamic_profile from inside a script: dp.init(DIR), then a
step loop that edits DIR/profiler_config.json itself during step 3 (as a
user would from another shell) to record 2 steps.
    dynamic_inscript.py DIR
"""
import json, os, sys, time
import prof
from prof import dynamic_profile as dp
d = sys.argv[1]
dp.init(d)
cfg = os.path.join(d, "profiler_config.json")
for i in range(1, 13):
    if i == 3:
        with open(cfg) as f:
            c = json.load(f)
        c["active"] = 2
        with open(cfg + ".tmp", "w") as f:
            json.dump(c, f)
        os.rename(cfg + ".tmp", cfg)
        time.sleep(0.5)
    time.sleep(0.02)
    dp.step()
print("ok")
