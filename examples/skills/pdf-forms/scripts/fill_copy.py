"""Write a copy of a PDF with its form fields filled (pypdf).

usage: fill_copy.py <in.pdf> <values.json> <out.pdf>
"""
import json
import sys

from pypdf import PdfReader, PdfWriter


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: fill_copy.py <in.pdf> <values.json> <out.pdf>")
    src, values_path, out = sys.argv[1:]
    with open(values_path) as f:
        values = json.load(f)
    reader = PdfReader(src)
    writer = PdfWriter()
    writer.append(reader)
    fields = reader.get_fields() or {}
    filled = {k: str(v) for k, v in values.items() if k in fields}
    for page in writer.pages:
        if filled:
            writer.update_page_form_field_values(page, filled)
    if "title" in values:
        writer.add_metadata({"/Title": str(values["title"])})
    with open(out, "wb") as f:
        writer.write(f)
    print(f"wrote {out}: {len(filled)} field(s) filled"
          + (f", title {values['title']!r}" if "title" in values else ""))


if __name__ == "__main__":
    main()
