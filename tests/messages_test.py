#!/usr/bin/env python3
"""What a person reads (issue 52, item 8): each message says what happened,
once, in words that point at what to do. Each test runs as root and as an
unprivileged user through sandbox_test.py's harness; every name a skill
reaches for is reserved (*.test) and sent to a closed loopback port by the
harness's own --resolve config. Prints TAP.

Usage: messages_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)
EXAMPLES = os.path.join(h.SRC, "examples", "skills")


@test()
def an_allowed_host_this_machine_cannot_reach_is_no_refusal(m, base):
    """weather declares api.weather.test:443; the harness points it at a
    closed port. Before, that read "network_egress_blocked ... refused"
    and, at the end, "refused: Fetch api.weather.test ... allow with:
    --policy", a rule that changes nothing. Now it says the host was
    allowed and this machine could not reach it, and the end lists no
    refusal."""
    p = m.run("run", "-i", '{"city": "Oslo"}', os.path.join(EXAMPLES, "weather"), check=1)
    assert "weather API unreachable" in p.out, p.out
    lines = [x for x in p.err.splitlines() if x.startswith("skillgate: ")]
    said = [x for x in lines if "api.weather.test" in x]
    # (urllib may try twice: the second is "repeated 1 more time")
    assert said and all(x.startswith("skillgate: network: TCP api.weather.test:443 was "
                                     "allowed") for x in said), p.err
    assert said[0].startswith("skillgate: network: TCP api.weather.test:443 was allowed, but "
                              "this machine could not reach it: upstream 127.0.0.1:9: "), said
    assert "(no refusal: this machine's DNS or network; --resolve api.weather.test:443:ADDR " \
           "points the name elsewhere)" in said[0], said
    assert not [x for x in lines if x.startswith("skillgate: refused:")], p.err
    assert "--policy" not in p.err and "network_egress_blocked" not in p.err, p.err
    t = m.last_trace()
    assert t["refusals"] == [], t["refusals"]
    ev = [e["data"] for e in t["events"] if e["kind"] == "network_egress_blocked"]
    assert ev and all(e["upstream_failed"] is True for e in ev), ev
    assert ev[0]["name"] == "api.weather.test" and ev[0]["port"] == 443, ev


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
