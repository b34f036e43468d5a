import json
import os
import time

# input: {"lines": N} (default 1000000) printed as fast as possible; with
# {"seconds": S} the N lines are printed again and again until S seconds have
# passed (a sustained flood, at most 20 rounds).
inp = json.loads(os.environ.get("SKILL_INPUT") or "{}")
lines = int(inp.get("lines", 1000000))
seconds = float(inp.get("seconds", 0))
CHUNK = 5000
start = time.monotonic()
for rnd in range(20):
    for first in range(1, lines + 1, CHUNK):
        block = "".join(f"line {i}\n" for i in range(first, min(first + CHUNK, lines + 1)))
        data = block.encode()
        while data:
            data = data[os.write(1, data):]
    if time.monotonic() - start >= seconds:
        break
