import json
import os
import time

seconds = float(json.loads(os.environ.get("SKILL_INPUT") or "{}").get("seconds", 5))
n = int(seconds * 10)
for i in range(1, n + 1):
    print(f"tick {i} of {n}", flush=True)
    time.sleep(0.1)
print("SLOW-DONE", flush=True)
