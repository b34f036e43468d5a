"""weather: one declared API, one declared key, JSON out."""
import json
import os
import sys
import urllib.parse
import urllib.request

API = "https://api.weather.test/v1/current"


def main() -> int:
    raw = os.environ.get("SKILL_INPUT") or sys.stdin.read() or "{}"
    try:
        req = json.loads(raw)
    except ValueError as e:
        print(json.dumps({"error": f"input is not JSON: {e}"}))
        return 1
    city = str(req.get("city", "")).strip()
    if not city:
        print(json.dumps({"error": "input needs a city"}))
        return 1
    key = os.environ.get("WEATHER_API_KEY", "")
    url = API + "?" + urllib.parse.urlencode({"q": city})
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            data = json.load(r)
    except Exception as e:  # noqa: BLE001 - any failure is reported the same way
        print(json.dumps({"error": f"weather API unreachable: {e}"}))
        return 1
    print(json.dumps({
        "city": city,
        "temperature_c": data.get("temperature_c"),
        "conditions": data.get("conditions"),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
