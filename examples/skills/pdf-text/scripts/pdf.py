"""A small PDF reader: objects, streams (raw or FlateDecode), page text."""
import re
import zlib

OBJ_RE = re.compile(rb"(\d+)\s+(\d+)\s+obj(.*?)endobj", re.S)
STREAM_RE = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
STRING_RE = re.compile(rb"\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>")


def objects(data):
    return {int(m.group(1)): m.group(3) for m in OBJ_RE.finditer(data)}


def stream_of(body):
    m = STREAM_RE.search(body)
    if not m:
        return None
    raw = m.group(1)
    if b"/FlateDecode" in body[: m.start()]:
        try:
            return zlib.decompress(raw)
        except zlib.error:
            return b""
    return raw


def decode_string(tok):
    if tok.startswith(b"<"):
        hexs = re.sub(rb"\s", b"", tok[1:-1])
        if len(hexs) % 2:
            hexs += b"0"
        return bytes.fromhex(hexs.decode()).decode("latin-1")
    s, out, i = tok[1:-1], bytearray(), 0
    escapes = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("f"): 12}
    while i < len(s):
        c = s[i]
        if c == 0x5C and i + 1 < len(s):  # backslash
            n = s[i + 1]
            if n in escapes:
                out.append(escapes[n])
                i += 2
            elif 0x30 <= n <= 0x37:
                j = i + 1
                while j < len(s) and j < i + 4 and 0x30 <= s[j] <= 0x37:
                    j += 1
                out.append(int(s[i + 1 : j], 8) & 0xFF)
                i = j
            else:
                out.append(n)
                i += 2
        else:
            out.append(c)
            i += 1
    return out.decode("latin-1")


def content_text(content):
    """Text shown by Tj, TJ, ' and " operators; T* and Td start new lines."""
    lines, cur = [], []
    for m in re.finditer(rb"\[(.*?)\]\s*TJ|(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>)\s*(Tj|'|\")|T\*|Td|TD|ET",
                         content, re.S):
        if m.group(1) is not None:
            cur.append("".join(decode_string(t) for t in STRING_RE.findall(m.group(1))))
        elif m.group(2) is not None:
            if m.group(3) in (b"'", b'"') and cur:
                lines.append("".join(cur))
                cur = []
            cur.append(decode_string(m.group(2)))
        elif cur:
            lines.append("".join(cur))
            cur = []
    if cur:
        lines.append("".join(cur))
    return [line for line in lines if line.strip()]


def pages(data):
    """Text lines per page, in page-tree order of appearance."""
    objs = objects(data)
    result = []
    for body in objs.values():
        if not re.search(rb"/Type\s*/Page(?!s)", body):
            continue
        refs = []
        m = re.search(rb"/Contents\s*(\[(.*?)\]|(\d+)\s+\d+\s+R)", body, re.S)
        if m and m.group(3):
            refs = [int(m.group(3))]
        elif m:
            refs = [int(x) for x in re.findall(rb"(\d+)\s+\d+\s+R", m.group(2))]
        text = []
        for r in refs:
            s = stream_of(objs.get(r, b""))
            if s:
                text.extend(content_text(s))
        result.append(text)
    if not data.startswith(b"%PDF-"):
        raise ValueError("not a PDF file (no %PDF- header)")
    return result
