"""info: PDF version, page count and the Info dictionary's text fields."""
import re

import pdf


def run(data, req):
    version = data[5:8].decode("latin-1") if data.startswith(b"%PDF-") else None
    fields = {}
    for key in (b"Title", b"Author", b"Subject", b"Producer", b"Creator"):
        m = re.search(rb"/" + key + rb"\s*(\((?:\\.|[^\\)])*\))", data)
        if m:
            fields[key.decode()] = pdf.decode_string(m.group(1))
    return {"version": version, "pages": len(pdf.pages(data)), "info": fields}
