import sys
if len(sys.argv) < 2:
    sys.exit("usage: pages.py FILE.pdf")
try:
    data = open(sys.argv[1], "rb").read()
except OSError as e:
    sys.exit(f"pages.py: {e}")
print(data.count(b"/Type /Page") - data.count(b"/Type /Pages"))
