"""search: lines containing the query (case-insensitive), with page numbers."""
import pdf


def run(data, req):
    query = str(req.get("query", "")).lower()
    if not query:
        raise ValueError("search needs a query")
    hits = [{"page": i + 1, "line": line}
            for i, lines in enumerate(pdf.pages(data))
            for line in lines if query in line.lower()]
    return {"query": query, "matches": hits}
