import os

path = os.path.join(os.path.expanduser("~"), "tui-outbox", "result.txt")
print("writing", path, flush=True)
try:
    with open(path, "w") as f:
        f.write("written by tui-writer\n")
    print("WRITE-OK", path, flush=True)
except OSError as e:
    print(f"WRITE-FAILED errno {e.errno} ({e.strerror})", flush=True)
