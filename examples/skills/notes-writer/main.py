"""notes-writer: one declared write path, Markdown notes in it."""
import datetime
import json
import os
import re
import sys

NOTES = os.path.expanduser("~/.local/share/notes-writer")


def slug(title):
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s[:60] or "note"


def main() -> int:
    try:
        req = json.loads(os.environ.get("SKILL_INPUT") or "{}")
    except ValueError as e:
        print(json.dumps({"error": f"input is not JSON: {e}"}))
        return 1
    title = str(req.get("title", "")).strip()
    text = str(req.get("text", ""))
    if not title:
        print(json.dumps({"error": "input needs a title"}))
        return 1
    os.makedirs(NOTES, exist_ok=True)
    path = os.path.join(NOTES, slug(title) + ".md")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# {title}\n\n_{stamp}_\n\n{text}\n")
    notes = sorted(n for n in os.listdir(NOTES) if n.endswith(".md"))
    print(json.dumps({"saved": path, "notes": notes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
