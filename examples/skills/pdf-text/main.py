"""pdf-text: the input's "action" selects one of the scripts."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scripts"))

import extract  # noqa: E402
import info  # noqa: E402
import search  # noqa: E402

ACTIONS = {"extract": extract.run, "info": info.run, "search": search.run}


def main() -> int:
    raw = os.environ.get("SKILL_INPUT") or "{}"
    try:
        req = json.loads(raw)
    except ValueError as e:
        print(json.dumps({"error": f"input is not JSON: {e}"}))
        return 1
    action = req.get("action", "extract")
    if action not in ACTIONS:
        print(json.dumps({"error": f"unknown action {action!r}; one of {sorted(ACTIONS)}"}))
        return 1
    path = req.get("file", "samples/hello.pdf")
    if not os.path.isabs(path):
        path = os.path.join(HERE, path)
    try:
        with open(path, "rb") as f:
            data = f.read(16 * 1024 * 1024)
        result = ACTIONS[action](data, req)
    except (OSError, ValueError) as e:
        print(json.dumps({"error": str(e)}))
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
