"""Print a PDF's page count, metadata and form fields (pypdf)."""
import sys

from pypdf import PdfReader


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: inspect_pdf.py <file.pdf>")
    reader = PdfReader(sys.argv[1])
    print(f"file: {sys.argv[1]}")
    print(f"pages: {len(reader.pages)}")
    meta = reader.metadata or {}
    for key in ("/Title", "/Author", "/Producer"):
        if meta.get(key):
            print(f"{key[1:].lower()}: {meta[key]}")
    fields = reader.get_fields() or {}
    print(f"fields: {len(fields)}")
    for name, field in sorted(fields.items()):
        print(f"  {name} = {field.get('/V', '')!s}")


if __name__ == "__main__":
    main()
