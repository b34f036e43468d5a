"""extract: the text of every page."""
import pdf


def run(data, req):
    return {"pages": [{"page": i + 1, "text": "\n".join(t)} for i, t in enumerate(pdf.pages(data))]}
