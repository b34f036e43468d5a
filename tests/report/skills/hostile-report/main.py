# Everything here is hostile to the report that shows this run; the
# payloads set window.__pwned, which the browser test checks.
import os
import socket
import sys

PAYLOADS = [
    "<script>alert(1)</script><script>window.__pwned=1</script>",
    "<img src=x onerror=alert(1)><img src=x onerror=window.__pwned=1>",
    "[x](javascript:alert(1)) [y](javascript:window.__pwned=1) ![i](https://exfil.test/p.png)",
    "<a href=\"javascript:window.__pwned=1\">click</a> <svg onload=window.__pwned=1></svg>",
    "```\n</pre></td></tr></table></section><script>window.__pwned=1</script>",
    "`` ` ``` code `fence` ```` breaks",
    "quote \" apostrophe ' ampersand &amp; &lt;b&gt; </title></style><style>body{display:none}</style>",
    "bidi \u202aLRE\u202b RLE\u202c PDF\u202d LRO\u202e RLO\u2066 LRI\u2067 RLI\u2068 FSI\u2069 PDI",
    "controls \x1b[31mred\x1b[0m bell\x07 backspace\x08 nul-free del\x7f c1\u009b",
    "| a | table | row |\n# a heading\n- a list",
]
for p in PAYLOADS:
    print(p)
    print("stderr: " + p, file=sys.stderr)

# a long line and a flood, past what a report shows
print("L" * 5000)
for i in range(400):
    print(f"flood {i:04d} " + "f" * 1000)
sys.stdout.flush()

# a path and a host no one declared: refused, and named in the trace
try:
    with open("/tmp/../" + os.environ.get("HOME", "/") + "/<img src=x onerror=window.__pwned=1>", "w"):
        pass
except OSError:
    pass
try:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "<script>window.__pwned=1<\u202e>.txt"), "w"):
        pass
except OSError:
    pass
try:
    socket.create_connection(("javascript-alert.report.test", 443), timeout=3).close()
except OSError:
    pass
