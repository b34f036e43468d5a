"""skillgate benchmarks: medians, min/max and ratios, as a markdown table."""
import glob
import json
import os
import platform
import resource
import shlex
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def make_tree(root, n):
    for i in range(n):
        d = os.path.join(root, f"g{i // 200:02d}", f"s{i:05d}")
        os.makedirs(d)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(f"---\nname: s{i:05d}\ndescription: Skill number {i}.\n"
                    f"allowed-tools: Read Grep Bash(git diff:*)\n---\n# Body\n")


def timed(cmd, pass_fds=()):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   pass_fds=pass_fds)
    return (time.perf_counter() - t) * 1000


def bench_discover(top, rounds=15):
    sg = os.path.join(top, "build", "skillgate")
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    try:
        make_tree(tmp, 10000)
        rows = {
            "skillgate list --json (10,000 skills)": [sg, "list", "--json", tmp],
            "find -name SKILL.md -exec cat (floor)": ["find", tmp, "-name", "SKILL.md",
                                                      "-exec", "cat", "{}", "+"],
        }
        times = {k: [] for k in rows}
        for k, cmd in rows.items():  # warm the page cache once
            timed(cmd)
        for _ in range(rounds):  # interleaved
            for k, cmd in rows.items():
                times[k].append(timed(cmd))
        ref = statistics.median(times["find -name SKILL.md -exec cat (floor)"])
        print(f"\n### discover ({platform.node()}, {os.cpu_count()} cores, "
              f"{time.strftime('%Y-%m-%d')}, {rounds} interleaved rounds)\n")
        print("| what | median ms | min | max | ratio to floor | command |")
        print("|---|---:|---:|---:|---:|---|")
        for k, cmd in rows.items():
            v = times[k]
            print(f"| {k} | {statistics.median(v):.1f} | {min(v):.1f} | {max(v):.1f} | "
                  f"{statistics.median(v) / ref:.2f}x | `{' '.join(cmd).replace(tmp, 'DIR')}` |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)




def _sg_and_tmp(top):
    """The skillgate under test, and a scratch folder every user may enter."""
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    os.chmod(tmp, 0o755)
    return os.path.join(top, "build", "skillgate"), tmp


# ---- egress: proxy throughput and added connect latency ----------------

EGRESS_CLIENT = r"""
import socket, sys, time, os
host, port, mode, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
if mode == "download":
    t = time.perf_counter()
    s = socket.create_connection((host, port))
    s.sendall(b"\x02GO")  # no HTTP method prefix: the proxy decides at once
    n = 0
    buf = bytearray(1 << 20)
    while True:
        k = s.recv_into(buf)
        if not k:
            break
        n += k
    print(f"{n} {time.perf_counter() - t:.6f}")
elif mode == "lookup":
    # the name lookup alone, as create_connection makes it (A and AAAA)
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        lat.append(time.perf_counter() - t)
    lat.sort()
    print(f"{lat[len(lat) // 2] * 1000:.4f}")
else:
    # connect + one-byte round trip to an address looked up once before
    fam, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        s = socket.socket(fam, kind, proto)
        s.connect(addr)
        s.sendall(b"\x01")  # not the start of an HTTP method: the proxy decides at once
        s.recv(1)
        lat.append(time.perf_counter() - t)
        s.close()
    lat.sort()
    print(f"{lat[len(lat) // 2] * 1000:.4f}")
"""


def _server(size):
    import socket as so
    import threading
    srv = so.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1024)
    chunk = b"\0" * (1 << 20)

    def serve(c):
        try:
            first = c.recv(3)
            if first == b"\x02GO":
                for _ in range(size >> 20):
                    c.sendall(chunk)
            else:
                c.sendall(b"\x01")
        except OSError:
            pass
        c.close()

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(c,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return srv


def bench_egress(top, rounds=5, size=1 << 30, connects=200):
    sg = os.path.join(top, "build", "skillgate")
    srv = _server(size)
    port = srv.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    os.chmod(tmp, 0o755)
    relay = None
    try:
        # the floor of any proxy here: a bare splice relay (bench/relay.c:
        # accept, connect, splice both ways, nothing checked or recorded)
        relay_port = None
        if shutil.which("cc"):
            exe = os.path.join(tmp, "relay")
            subprocess.run(["cc", "-O2", "-o", exe, os.path.join(top, "bench", "relay.c")],
                           check=True)
            probe = socket.socket()
            probe.bind(("127.0.0.1", 0))
            relay_port = probe.getsockname()[1]
            probe.close()
            relay = subprocess.Popen([exe, str(relay_port), str(port)], stdout=subprocess.PIPE,
                                     text=True)
            assert relay.stdout.readline().strip() == "ready", "the relay did not start"
        d = os.path.join(tmp, "egress-bench")
        os.makedirs(d)
        with open(os.path.join(d, "client.py"), "w") as f:
            f.write(EGRESS_CLIENT)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write("---\nname: egress-bench\ndescription: proxy benchmark\n---\n")
        # like against like: the connect row looks the name up once, before
        # its loop (the direct client has a numeric address); the lookup is
        # its own row, against a lookup answered from /etc/hosts (localhost)
        for mode, n in (("download", 1), ("connect", connects), ("lookup", connects)):
            with open(os.path.join(d, "skillsandbox.yaml"), "w") as f:
                f.write("skill: {name: egress-bench, description: b}\n"
                        "permissions:\n  network:\n    egress:\n"
                        "      - {domain: bench.example.test, ports: [9]}\n"
                        "resources: {max_runtime_seconds: 600, max_output_bytes: 65536}\n"
                        f"entrypoint: {{command: python3, args: [client.py, bench.example.test, '9', "
                        f"{mode}, '{n}']}}\n")
            for root, dirs, files in os.walk(d):
                os.chmod(root, 0o755)
                for x in files:
                    os.chmod(os.path.join(root, x), 0o644)
            direct_host = "localhost" if mode == "lookup" else "127.0.0.1"
            direct_cmd = ["python3", os.path.join(d, "client.py"), direct_host, str(port), mode, str(n)]
            proxied_cmd = [sg, "run", "--resolve", f"bench.example.test:9:127.0.0.1:{port}", d]
            relay_cmd = (direct_cmd[:3] + [str(relay_port)] + direct_cmd[4:]
                         if relay_port and mode != "lookup" else None)
            direct, proxied, relayed = [], [], []
            for _ in range(rounds):  # interleaved
                direct.append(subprocess.run(direct_cmd, capture_output=True, text=True,
                                             check=True).stdout.split())
                if relay_cmd:
                    relayed.append(subprocess.run(relay_cmd, capture_output=True, text=True,
                                                  check=True).stdout.split())
                proxied.append(subprocess.run(proxied_cmd, capture_output=True, text=True,
                                              check=True).stdout.split())
            if mode == "download":
                rate = lambda r: int(r[0]) / float(r[1]) / 1e6
                dr = [rate(r) for r in direct]
                pr = [rate(r) for r in proxied]
                assert all(int(r[0]) == size for r in direct + proxied), "short download"
                print(f"\n### egress ({platform.node()}, {os.cpu_count()} cores, "
                      f"{time.strftime('%Y-%m-%d')}, {rounds} interleaved rounds)\n")
                print("| what | median | min | max | ratio to direct | command |")
                print("|---|---:|---:|---:|---:|---|")
                print(f"| 1 GiB download, direct | {statistics.median(dr):.0f} MB/s | {min(dr):.0f} | "
                      f"{max(dr):.0f} | 1.00x | `python3 client.py 127.0.0.1 PORT download 1` |")
                if relayed:
                    rr = [rate(r) for r in relayed]
                    print(f"| the same through a bare splice relay (the floor of any proxy here) | "
                          f"{statistics.median(rr):.0f} MB/s | {min(rr):.0f} | {max(rr):.0f} | "
                          f"{statistics.median(rr) / statistics.median(dr):.2f}x | "
                          f"`relay PORT2 PORT` (bench/relay.c), then the client on PORT2 |")
                print(f"| 1 GiB download, through the proxy | {statistics.median(pr):.0f} MB/s | "
                      f"{min(pr):.0f} | {max(pr):.0f} | {statistics.median(pr) / statistics.median(dr):.2f}x"
                      f" | `skillgate run --resolve bench.example.test:9:127.0.0.1:PORT SKILL` |")
                continue
            dl = [float(r[0]) for r in direct]
            pl = [float(r[0]) for r in proxied]
            if mode == "connect":
                print(f"| connect + 1-byte round trip, direct (median of {n}; address looked up "
                      f"once) | {statistics.median(dl):.3f} ms | {min(dl):.3f} | {max(dl):.3f} | "
                      f"1.00x | `python3 client.py 127.0.0.1 PORT connect {n}` |")
            else:
                print(f"| name lookup, direct: localhost from /etc/hosts (median of {n}) | "
                      f"{statistics.median(dl):.3f} ms | {min(dl):.3f} | {max(dl):.3f} | 1.00x | "
                      f"`python3 client.py localhost PORT lookup {n}` |")
            if relayed:
                rl = [float(r[0]) for r in relayed]
                print(f"| the same through a bare splice relay (the floor of any proxy here) | "
                      f"{statistics.median(rl):.3f} ms | {min(rl):.3f} | {max(rl):.3f} | "
                      f"{statistics.median(rl) / statistics.median(dl):.2f}x | added: "
                      f"{statistics.median(rl) - statistics.median(dl):.3f} ms |")
            what = ("the same through the proxy" if mode == "connect" else
                    "bench.example.test through the DNS stub (A + AAAA)")
            print(f"| {what} | {statistics.median(pl):.3f} ms | {min(pl):.3f} | "
                  f"{max(pl):.3f} | {statistics.median(pl) / statistics.median(dl):.2f}x | "
                  f"added: {statistics.median(pl) - statistics.median(dl):.3f} ms |")
    finally:
        if relay:
            relay.kill()
            relay.wait()
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)


def bench_route(top, n=100000):
    """The proxy's question for every upstream it connects (egress/route.c):
    is it an address of this machine? One RTM_GETROUTE on a netlink socket
    kept for the run, per connection; here alone, for each kind of answer."""
    if not shutil.which("cc"):
        sys.exit("route: needs cc")
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    try:
        exe = os.path.join(tmp, "route_lookup")
        subprocess.run(["cc", "-O2", "-I", os.path.join(top, "egress"), "-o", exe,
                        os.path.join(top, "bench", "route_lookup.c"),
                        os.path.join(top, "egress", "route.c"), "-lmnl"], check=True)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # no packet is sent: a UDP connect only picks this machine's source address
            u.connect(("192.0.2.1", 9))
            mine = u.getsockname()[0]
        except OSError:
            mine = "127.0.0.1"
        finally:
            u.close()
        addrs = ["127.0.0.1", mine, "198.51.100.7", "::1", "2001:db8::7", "::ffff:127.0.0.1"]
        out = subprocess.run([exe, str(n), *addrs], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        print(f"\n### the proxy's route question per upstream ({platform.node()}, "
              f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}, {n} lookups each, "
              "median of batches of 100)\n")
        print("| address | the kernel's answer | median | min | max |")
        print("|---|---|---:|---:|---:|")
        for line in out:
            a, rest = line.split(" ", 1)
            kind, med, lo, hi = rest.rsplit(" ", 3)  # kind may be an error's words
            print(f"| {a} | {kind} | {float(med):.2f} us | {float(lo):.2f} | {float(hi):.2f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- launch, syscalls, output: skillgate against bare, unshare, bwrap, firejail

def _skill(tmp, name, command, args, extra=""):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: benchmark\n---\n")
    with open(os.path.join(d, "skillsandbox.yaml"), "w") as f:
        f.write(f"skill: {{name: {name}, description: b}}\n{extra}"
                f"entrypoint: {{command: {command}, args: {json.dumps(args)}}}\n")
    os.chmod(d, 0o755)
    for x in os.listdir(d):
        os.chmod(os.path.join(d, x), 0o644)
    return d


def _runners(sg, skill_dir, prog):
    bw = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
          "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
          "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
          "--tmpfs", "/tmp"]
    rows = {"bare": prog,
            "unshare -Umpnf": ["unshare", "-Umpnf", "--mount-proc"] + prog,
            "bwrap --unshare-all": bw + prog,
            "firejail --net=none": ["firejail", "--quiet", "--noprofile", "--net=none"] + prog,
            "skillgate run": [sg, "run", "--prompt", "deny", skill_dir]}
    return {k: v for k, v in rows.items() if shutil.which(v[0]) or os.path.exists(v[0])}


def _shown(cmd):
    line = shlex.join(cmd)  # to paste into a shell as it is
    if "SECCOMP_FD" in cmd:  # the filter is passed as an open file
        line = line.replace("SECCOMP_FD", "3") + " 3<allow-all.bpf"
    return line


def _table(title, rows, times, ref, unit="ms", fmt="{:.2f}"):
    print(f"\n### {title} ({platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')})\n")
    print(f"| what | median {unit} | min | max | ratio to {ref} | command |")
    print("|---|---:|---:|---:|---:|---|")
    # a peer that is not installed leaves its rows out; without the
    # reference there are no ratios (scripts/dev bench installs the peers)
    r = statistics.median(times[ref]) if times.get(ref) else None
    for k, cmd in rows.items():
        v = times[k]
        ratio = f"{statistics.median(v) / r:.2f}x" if r else "-"
        print(f"| {k} | {fmt.format(statistics.median(v))} | {fmt.format(min(v))} | "
              f"{fmt.format(max(v))} | {ratio} | `{_shown(cmd)}` |")
    if r is None:
        print(f"\n(no {ref} here, so no ratios: `scripts/dev bench` installs the peers)")


def bench_launch(top, rounds=61):
    sg, tmp = _sg_and_tmp(top)
    try:
        # end to end: /bin/true, trace and audit written
        d = _skill(tmp, "bench-true", "/usr/bin/true", [])
        rows = _runners(sg, d, ["/usr/bin/true"])
        times = {k: [] for k in rows}
        cpu = {k: [] for k in rows}
        for _ in range(rounds):
            for k, cmd in rows.items():
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                times[k].append(timed(cmd))
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[k].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
        _table("launch, end to end (/bin/true; skillgate writes its trace and audit record)",
               rows, times, "bwrap --unshare-all")
        # what a busy host charges for: the CPU each launch takes (every
        # process the runner waited for, user and system; not kernel
        # workers, nor a process left to init, such as skillgate's decoy
        # holder)
        _table("launch, CPU time per run (/bin/true, getrusage of the waited-for processes)",
               rows, cpu, "bwrap --unshare-all")
        # a loaded host: one core kept busy (a compile), so CPU per launch
        # becomes wall time
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            times = {k: [] for k in rows}
            for _ in range(rounds // 2 + 1):
                for k, cmd in rows.items():
                    times[k].append(timed(cmd))
        finally:
            busy.kill()
            busy.wait()
        _table("launch, end to end with one core kept busy (a spinning process beside it)",
               rows, times, "bwrap --unshare-all")
        # time to exec: the sandboxed program prints the clock as it starts
        d = _skill(tmp, "bench-date", "/usr/bin/date", ["+%s%N"])
        rows = _runners(sg, d, ["/usr/bin/date", "+%s%N"])
        times = {k: [] for k in rows}
        for _ in range(rounds):
            for k, cmd in rows.items():
                t0 = time.time_ns()
                out = subprocess.run(cmd, capture_output=True, text=True).stdout.split()
                stamp = int(out[-1])
                times[k].append((stamp - t0) / 1e6)
        _table("launch, time to exec (until the program's first instruction reads the clock)",
               rows, times, "bwrap --unshare-all")
        # syscall-heavy workloads, as the issue names them: small reads and
        # writes, and a stat loop (a path walk through the sandbox's mounts)
        # the floor of any seccomp sandbox: bwrap with a one-instruction
        # filter that allows everything (the kernel's seccomp entry path
        # alone, with the action cache hit on every call)
        allow_all = os.path.join(tmp, "allow-all.bpf")
        with open(allow_all, "wb") as f:
            f.write(struct.pack("<HBBI", 0x06, 0, 0, 0x7FFF0000))  # BPF_RET|BPF_K, SECCOMP_RET_ALLOW
        workloads = [
            ("dd bs=1: 4 million read/write calls", "bench-dd",
             ["/usr/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=2000000"]),
            ("a stat loop: 1 million stat calls on /usr/bin/env", "bench-stat",
             ["/usr/bin/perl", "-e", 'stat("/usr/bin/env") for 1..1000000']),
        ]
        for title, name, prog in workloads:
            if not os.path.exists(prog[0]):
                continue
            d = _skill(tmp, name, prog[0], prog[1:])
            rows = {k: v for k, v in _runners(sg, d, prog).items()
                    if k in ("bare", "bwrap --unshare-all", "skillgate run")}
            if "bwrap --unshare-all" in rows:
                bw = rows["bwrap --unshare-all"]
                rows = {"bare": rows["bare"], "bwrap --unshare-all": bw,
                        "bwrap --unshare-all --seccomp (allow-all filter)":
                            bw[:-len(prog)] + ["--seccomp", "SECCOMP_FD"] + prog,
                        **{k: v for k, v in rows.items() if k not in ("bare", "bwrap --unshare-all")}}
            times = {k: [] for k in rows}
            for _ in range(11):  # noisy: 7 rounds put the allow-all floor anywhere in 1.13-1.32x
                for k, cmd in rows.items():
                    if "SECCOMP_FD" in cmd:
                        with open(allow_all, "rb") as f:
                            fd = f.fileno()
                            times[k].append(timed([str(fd) if a == "SECCOMP_FD" else a for a in cmd],
                                                  pass_fds=(fd,)))
                    else:
                        times[k].append(timed(cmd))
            _table(f"syscall overhead ({title})", rows, times, "bwrap --unshare-all")
        # output: 1 GiB to stdout, broker draining it under --json
        d = _skill(tmp, "bench-out", "/usr/bin/head", ["-c", "1073741824", "/dev/zero"],
                   "resources: {max_runtime_seconds: 600}\n")
        # the audit record's SHA-256 covers every byte, and one stream's
        # SHA-256 cannot be split across cores: the rate at which one core
        # hashes (OpenSSL, SHA-NI, 128 KiB blocks, as the broker does) is the
        # ceiling of any run that keeps that promise; hashing the stream with
        # openssl dgst in the pipe (8 KiB reads, no second thread) is shown
        # for scale
        speed = ["openssl", "speed", "-seconds", "2", "-bytes", "131072", "sha256"]
        rows = {"plain pipe": ["sh", "-c", "head -c 1073741824 /dev/zero | cat > /dev/null"],
                "SHA-256 alone, one core (the ceiling)": speed,
                "the same into openssl dgst -sha256": ["sh", "-c", "head -c 1073741824 /dev/zero | openssl dgst -sha256 > /dev/null"],
                "skillgate run --json > /dev/null": ["sh", "-c", f"{sg} run --json --prompt deny {d} > /dev/null"]}
        times = {k: [] for k in rows}
        for _ in range(5):
            for k, cmd in rows.items():
                if cmd is speed:  # "sha256  1158021.12k": thousands of bytes a second
                    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                    kbs = float(out.strip().splitlines()[-1].split()[-1].rstrip("k"))
                    times[k].append(kbs * 1000 / (1 << 20))
                    continue
                times[k].append(1024 / (timed(cmd) / 1000))
        _table("output streaming (1 GiB to stdout; rate, higher is better)", rows, times,
               "plain pipe", unit="MiB/s", fmt="{:.0f}")
        # the broker's memory must not grow with the output: its peak RSS
        # (wait4 of the broker itself) for 1 GiB against 1 MiB
        small = _skill(tmp, "bench-out-small", "/usr/bin/head", ["-c", "1048576", "/dev/zero"])
        peak = {}
        for name, skill in (("1 MiB", small), ("1 GiB", d)):
            rss = []
            for _ in range(3):
                with open(os.devnull, "w") as null:
                    p = subprocess.Popen([sg, "run", "--json", "--prompt", "deny", skill],
                                         stdout=null, stderr=subprocess.DEVNULL)
                    _, _, ru = os.wait4(p.pid, 0)
                    p.returncode = 0
                rss.append(ru.ru_maxrss / 1024)
            peak[name] = max(rss)
        print(f"\nbroker peak RSS under `run --json` (max of 3): {peak['1 MiB']:.1f} MiB for 1 MiB "
              f"of output, {peak['1 GiB']:.1f} MiB for 1 GiB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- soak: many runs in a row, and what they leave behind

def _leftovers(sg):
    """What runs can leave behind: skillgate cgroups, run folders, zombies,
    the invoking process's descriptors."""
    cg = 0
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        cg += sum(1 for d in dirs if d.startswith("skillgate"))
        dirs[:] = [d for d in dirs if not d.startswith("skillgate")]
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    runs = os.path.join(state, "skillgate", "runs")
    nruns = len(os.listdir(runs)) if os.path.isdir(runs) else 0
    zombies = 0  # skillgate's and its skills' (others on the machine are not counted)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
                comm = st[st.index("(") + 1:st.rindex(")")]
                zombies += st.rsplit(")", 1)[1].split()[0] == "Z" and comm in ("skillgate", "true")
            except (OSError, ValueError):
                pass
    return {"skillgate cgroups": cg, "run folders": nruns, "zombies": zombies,
            "this process's fds": len(os.listdir("/proc/self/fd"))}


def bench_soak(top, n=1000):
    sg, tmp = _sg_and_tmp(top)
    try:
        d = _skill(tmp, "bench-true", "/usr/bin/true", [])
        before = _leftovers(sg)
        t0 = time.monotonic()
        rss = []
        for i in range(n):
            p = subprocess.Popen([sg, "run", "--prompt", "deny", d], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = 0
            assert status == 0, f"run {i} ended with status {status}"
            rss.append(ru.ru_maxrss / 1024)
        took = time.monotonic() - t0
        # a run's decoy holder is left to init, which reaps it when it gets to it
        time.sleep(2)
        after = _leftovers(sg)
        print(f"\n### soak: {n} runs of /bin/true in a row ({platform.node()}, "
              f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')})\n")
        print(f"throughput {n / took:.1f} runs/s; broker peak RSS: first {rss[0]:.1f} MiB, "
              f"median {statistics.median(rss):.1f}, last {rss[-1]:.1f}, max {max(rss):.1f}\n")
        print("| left behind | before | after |")
        print("|---|---:|---:|")
        for k in before:
            print(f"| {k} | {before[k]} | {after[k]} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- the TUI: a flood of output in a real terminal (tmux)

class _Tmux:
    def __init__(self, name, cols=120, rows=40):
        self.sock, self.cols, self.rows = f"sgbench-{name}-{os.getpid()}", cols, rows

    def t(self, *a):
        return subprocess.run(["tmux", "-L", self.sock, *a], capture_output=True, text=True,
                              timeout=10)

    def start(self, cmd):
        self.t("new-session", "-d", "-x", str(self.cols), "-y", str(self.rows),
               "env", "LANG=C.UTF-8", "TERM=xterm-256color", *cmd)

    def screen(self):
        return self.t("capture-pane", "-p").stdout

    def kill(self):
        path = self.t("display", "-p", "#{socket_path}").stdout.strip()
        self.t("kill-server")
        if path.endswith(self.sock) and os.path.exists(path):
            os.unlink(path)  # tmux leaves its socket behind


def _wait_screen(tm, text, limit=120):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if text in tm.screen():
            return True
        time.sleep(0.005)
    return False


def bench_tui(top, rounds=3, lines=1000000):
    sg = os.path.join(top, "build", "skillgate")
    if not shutil.which("tmux"):
        sys.exit("bench tui: tmux is needed (apt-get install tmux)")
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    os.chmod(tmp, 0o755)
    d = _skill(tmp, "bench-flood", "/usr/bin/seq", [str(lines)],
               "resources: {max_runtime_seconds: 600, max_output_bytes: 1073741824}\n")
    tui_row = "skillgate tui (then Enter, Enter: select and run)"
    drain = {"seq in the terminal": [], "skillgate run (plain output)": [], tui_row: []}
    lat = []
    try:
        for _ in range(rounds):
            tm = _Tmux("ref")
            t0 = time.monotonic()
            tm.start(["sh", "-c", f"seq {lines}; echo DRAINED-MARK; sleep 600"])
            _wait_screen(tm, "DRAINED-MARK")
            drain["seq in the terminal"].append((time.monotonic() - t0) * 1000)
            tm.kill()
            tm = _Tmux("run")
            t0 = time.monotonic()
            tm.start(["sh", "-c", f"{sg} run --prompt deny {d}; echo DRAINED-MARK; sleep 600"])
            _wait_screen(tm, "DRAINED-MARK")
            drain["skillgate run (plain output)"].append((time.monotonic() - t0) * 1000)
            tm.kill()
            # twice: once left alone (the drain time), once typed at (the
            # latency; the probing itself takes CPU from the drain)
            for probing in (False, True):
                tm = _Tmux("tui")
                tm.start([sg, "tui", tmp])
                _wait_screen(tm, "bench-flood", 20)
                tm.t("send-keys", "Enter")
                _wait_screen(tm, "SKILL_INPUT", 20)
                t0 = time.monotonic()
                tm.t("send-keys", "Enter")
                while time.monotonic() - t0 < 300:
                    s = tm.screen()
                    if f"Output: {lines} lines" in s and "  done  " in s:
                        break
                    if not probing:
                        time.sleep(0.05)
                        continue
                    k0 = time.monotonic()
                    tm.t("send-keys", "/")
                    if _wait_screen(tm, "search:", 10):
                        lat.append((time.monotonic() - k0) * 1000)
                    tm.t("send-keys", "Escape")
                    _wait_screen(tm, "x stop", 2)
                if not probing:
                    drain[tui_row].append((time.monotonic() - t0) * 1000)
                tm.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cmds = {"seq in the terminal": ["seq", str(lines)],
            "skillgate run (plain output)": [sg, "run", "--prompt", "deny", "SKILL"],
            tui_row: [sg, "tui", "DIR"]}
    _table(f"TUI: {lines:,} lines drained in tmux 120x40 (time until the last line is on screen)",
           cmds, drain, "seq in the terminal")
    if lat:
        lat.sort()
        print(f"\nkey to screen while it drains (separate runs; `/` until \"search:\" shows, "
              f"tmux capture-pane polling every 5 ms): {len(lat)} samples, median "
              f"{statistics.median(lat):.0f} ms, worst {lat[-1]:.0f} ms")


# ---- traces: the Traces screen over 1,000 traces of 3 MB

def _key_latency(tm, n=15):
    """`/` until its filter line shows, then Esc; n samples, ms."""
    lat = []
    for _ in range(n):
        k0 = time.monotonic()
        tm.t("send-keys", "/")
        if _wait_screen(tm, "filter traces", 10):
            lat.append((time.monotonic() - k0) * 1000)
        tm.t("send-keys", "Escape")
        _wait_screen(tm, "Enter open", 5)
    return lat


def bench_traces(top, n=1000, rounds=3):
    sg = os.path.join(top, "build", "skillgate")
    if not shutil.which("tmux"):
        sys.exit("bench traces: tmux is needed (apt-get install tmux)")
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    os.chmod(tmp, 0o755)
    state = os.path.join(tmp, "state")
    env = dict(os.environ, XDG_STATE_HOME=state)
    try:
        d = _skill(tmp, "bench-trace", "/bin/sh",
                   ["-c", "i=0; while [ $i -lt 20000 ]; do echo \"line $i $(printf %080d 0)\"; "
                          "i=$((i+1)); done"],
                   "resources: {max_output_bytes: 16777216, max_runtime_seconds: 120}\n")
        subprocess.run([sg, "run", d], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        tdir = os.path.join(state, "skillgate", "traces")
        (one,) = [f for f in os.listdir(tdir) if f.endswith(".json")]
        with open(os.path.join(tdir, one), "rb") as f:
            doc = f.read()
        os.unlink(os.path.join(tdir, one))
        for i in range(n):  # distinct files: each one read from disk
            with open(os.path.join(tdir, f"20260101T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z"
                                         f"-bench-trace-1-{i:012x}.json"), "wb") as f:
                f.write(doc)
        index = os.path.join(tdir, ".index.jsonl")
        rows = {"cold: key 3 to the list (no index yet)": [], "cold: until every trace is read": [],
                "warm: key 3 to the list (index)": [], "floor: cat every trace": [],
                "floor: key to screen in tmux (cat echoing)": []}
        lat = []
        cmd = ["env", f"XDG_STATE_HOME={state}", sg, "tui", d]
        for _ in range(rounds):
            if os.path.exists(index):
                os.unlink(index)
            subprocess.run(["sh", "-c", f"sync; echo 3 > /proc/sys/vm/drop_caches"],
                           stderr=subprocess.DEVNULL)
            tm = _Tmux("traces")
            tm.start(cmd)
            _wait_screen(tm, "bench-trace", 20)
            t0 = time.monotonic()
            tm.t("send-keys", "3")
            _wait_screen(tm, f"of {n} traces")
            rows["cold: key 3 to the list (no index yet)"].append((time.monotonic() - t0) * 1000)
            lat += _key_latency(tm)
            while "reading" in tm.screen() and time.monotonic() - t0 < 600:
                time.sleep(0.01)
            rows["cold: until every trace is read"].append((time.monotonic() - t0) * 1000)
            tm.t("send-keys", "1")
            _wait_screen(tm, "1 skill")
            t0 = time.monotonic()
            tm.t("send-keys", "3")
            _wait_screen(tm, f"of {n} traces")
            rows["warm: key 3 to the list (index)"].append((time.monotonic() - t0) * 1000)
            tm.kill()
            subprocess.run(["sh", "-c", f"sync; echo 3 > /proc/sys/vm/drop_caches"],
                           stderr=subprocess.DEVNULL)
            t0 = time.monotonic()
            subprocess.run(["sh", "-c", f"cat {tdir}/*.json > /dev/null"], check=True)
            rows["floor: cat every trace"].append((time.monotonic() - t0) * 1000)
            tm = _Tmux("cat")
            tm.start(["cat"])
            time.sleep(0.3)
            for i in range(5):
                t0 = time.monotonic()
                tm.t("send-keys", "x")
                _wait_screen(tm, "x" * (i + 1), 5)
                rows["floor: key to screen in tmux (cat echoing)"].append(
                    (time.monotonic() - t0) * 1000)
            tm.kill()
        print(f"\n### Traces screen: {n:,} traces of {len(doc) / 1e6:.1f} MB in tmux 120x40 "
              f"({platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}, "
              f"{rounds} rounds, page cache dropped before each cold round)\n")
        print("| what | median ms | min | max |")
        print("|---|---:|---:|---:|")
        for k, v in rows.items():
            print(f"| {k} | {statistics.median(v):.0f} | {min(v):.0f} | {max(v):.0f} |")
        if lat:
            lat.sort()
            print(f"\nkey to screen while the cold list is read (`/` until its line shows): "
                  f"{len(lat)} samples, median {statistics.median(lat):.0f} ms, "
                  f"worst {lat[-1]:.0f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- files: creations and rewrites in a declared write path

FILES_CLIENT = r"""
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
for i in range(n):
    fd = os.open(f"{d}/f{i}", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b"x")
    os.close(fd)
t1 = time.perf_counter()
for i in range(n):
    fd = os.open(f"{d}/f{i}", os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"y")
    os.close(fd)
t2 = time.perf_counter()
for i in range(n):
    os.unlink(f"{d}/f{i}")
print((t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6)
"""


def _file_rows(sg, d, prog, binds):
    """bare, bubblewrap with binds (the folders prog uses) and skillgate run."""
    rows = {k: v for k, v in _runners(sg, d, prog).items()
            if k in ("bare", "bwrap --unshare-all", "skillgate run")}
    if "bwrap --unshare-all" in rows:
        rows["bwrap --unshare-all"] = rows["bwrap --unshare-all"][:-len(prog)] + binds + prog
    return rows


def bench_files(top, rounds=9, n=5000):
    """Each open that may write in a declared write path is the broker's
    (a seccomp notification; a creation is done and counted by the broker:
    run/diskcap.h). Against bare and bubblewrap, per call, measured inside
    the program (launch excluded)."""
    sg, tmp = _sg_and_tmp(top)
    try:
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        os.chmod(out, 0o777)
        client = os.path.join(tmp, "files.py")
        with open(client, "w") as f:
            f.write(FILES_CLIENT)
        os.chmod(client, 0o644)
        d = _skill(tmp, "bench-files", "python3", ["files.py", out, str(n)],
                   extra=f"permissions:\n  filesystem:\n    write: [{out}]\n")
        shutil.copy(client, os.path.join(d, "files.py"))
        os.chmod(os.path.join(d, "files.py"), 0o644)
        prog = ["python3", client, out, str(n)]
        rows = _file_rows(sg, d, prog, ["--ro-bind", tmp, tmp, "--bind", out, out])
        create = {k: [] for k in rows}
        rewrite = {k: [] for k in rows}
        for _ in range(rounds):  # interleaved
            for k, cmd in rows.items():
                p = subprocess.run(cmd, capture_output=True, text=True, check=True)
                nums = [ln for ln in p.stdout.splitlines() if ln[:1].isdigit()][-1].split()
                create[k].append(float(nums[0]))
                rewrite[k].append(float(nums[1]))
        ref = "bwrap --unshare-all" if "bwrap --unshare-all" in rows else "bare"
        _table(f"files: {n} creations in a declared write path, per call", rows, create, ref,
               unit="µs", fmt="{:.1f}")
        _table(f"files: {n} rewrites (O_WRONLY|O_TRUNC) of the same files, per call", rows,
               rewrite, ref, unit="µs", fmt="{:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- reads: what a recording pays to see every open

READS_CLIENT = r"""
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
names = [f"{d}/f{i % 100}" for i in range(n)]
t0 = time.perf_counter()
for p in names:
    os.close(os.open(p, os.O_RDONLY))
t1 = time.perf_counter()
print((t1 - t0) / n * 1e6)
"""


def bench_reads(top, rounds=9, n=5000):
    """A recording (skillgate record) sends every open to the broker, reads
    too, which notes the path and lets it continue (run/reads.h); a
    plain run never sees a read. Per open, measured inside the program
    (launch excluded): bare (the floor), bubblewrap, skillgate run, and the
    recording's own run (skillgate record --prompt deny)."""
    sg = os.path.join(top, "build", "skillgate")
    tmp = tempfile.mkdtemp(prefix="sgbench-reads.")
    os.chmod(tmp, 0o755)
    try:
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        for i in range(100):
            with open(os.path.join(data, f"f{i}"), "w") as f:
                f.write("x")
        for x in [data] + [os.path.join(data, f) for f in os.listdir(data)]:
            os.chmod(x, 0o755 if x == data else 0o644)
        d = _skill(tmp, "bench-reads", "python3", ["reads.py", data, str(n)],
                   extra=f"permissions:\n  filesystem:\n    read: [{data}]\n")
        with open(os.path.join(d, "reads.py"), "w") as f:
            f.write(READS_CLIENT)
        os.chmod(os.path.join(d, "reads.py"), 0o644)
        prog = ["python3", os.path.join(d, "reads.py"), data, str(n)]
        rows = _file_rows(sg, d, prog, ["--ro-bind", tmp, tmp])
        rows["skillgate record"] = [sg, "record", "--prompt", "deny", "--json", d]
        env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"))
        times = {k: [] for k in rows}
        for _ in range(rounds):  # interleaved
            for k, cmd in rows.items():
                p = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
                out = p.stdout
                if k == "skillgate record":  # the run's own output is in its trace
                    tr = sorted(glob.glob(os.path.join(tmp, "state", "skillgate", "traces",
                                                       "*.json")), key=os.path.getmtime)
                    with open(tr[-1]) as f:
                        out = "\n".join(e["message"] for e in json.load(f)["events"]
                                        if e["kind"] == "stdout")
                nums = [ln for ln in out.splitlines() if ln[:1].isdigit()]
                times[k].append(float(nums[-1]))
        _table(f"reads: {n} opens for reading in a declared folder, per call", rows, times, "bare",
               unit="µs", fmt="{:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _agent_world(top, prefix):
    """build/skillgate, and a home, config, state and runtime folder of their own."""
    sg = os.path.join(top, "build", "skillgate")
    if not os.access(sg, os.X_OK):
        sys.exit(f"{sg} is missing: run scripts/dev test (or meson compile -C build) first")
    tmp = tempfile.mkdtemp(prefix=prefix)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": f"{tmp}/home",
           "XDG_CONFIG_HOME": f"{tmp}/cfg", "XDG_STATE_HOME": f"{tmp}/state",
           "XDG_RUNTIME_DIR": f"{tmp}/run"}
    for d in ("home", "cfg/skillgate", "state", "run"):
        os.makedirs(f"{tmp}/{d}", mode=0o700)
    return sg, tmp, env


def bench_hook(top, rounds=201):
    """`skillgate hook` per event, as Claude Code runs it before every tool
    call: a rule decision, a low-risk tool, a grant, and one no rule
    decides (asked in Claude Code: no TUI attached); against /bin/true and
    cat given the same event (the floor: a process that starts, reads it and
    answers) and a one-line Python hook that only parses it (a common peer)."""
    sg, tmp, env = _agent_world(top, "sgbench-hook.")
    rules = "".join(f'  - "Bash(tool{i} build:*)"\n' for i in range(50))
    with open(f"{tmp}/cfg/skillgate/hook-policy.yaml", "w") as f:
        f.write('deny:\n  - "Bash(rm:*)"\nallow:\n' + rules + '  - "Bash(npm test:*)"\n')
    with open(f"{tmp}/cfg/skillgate/grants.yaml", "w") as f:
        f.write("grants:\n" + "".join(
            f'  - {{skill: claude-code, digest: agent, rule: "Bash(make t{i})", effect: allow, '
            f'created: "2026-01-01T00:00:00Z"}}\n' for i in range(50)))
    for x in ("hook-policy.yaml", "grants.yaml"):
        os.chmod(f"{tmp}/cfg/skillgate/{x}", 0o600)

    def ev(tool, inp):
        return json.dumps({"session_id": "bench", "cwd": tmp, "hook_event_name": "PreToolUse",
                           "tool_name": tool, "tool_input": inp}).encode()
    events = {"rule": ev("Bash", {"command": "npm test -- --ci"}),
              "low-risk": ev("Read", {"file_path": "/etc/hostname"}),
              "grant": ev("Bash", {"command": "make t49"}),
              "no rule (ask)": ev("Bash", {"command": "make deploy"})}
    rows = {"/bin/true (floor: a process)": ["/bin/true"],
            "cat (floor: read and answer)": ["cat"],
            "python3 json.load (a peer hook)": ["python3", "-c",
                                                "import json,sys; json.load(sys.stdin)"]}
    for k in events:
        rows[f"skillgate hook: {k}"] = [sg, "hook"]
    times = {k: [] for k in rows}
    for _ in range(rounds):
        for k, cmd in rows.items():
            data = events.get(k.replace("skillgate hook: ", ""), events["rule"])
            t0 = time.perf_counter()
            p = subprocess.run(cmd, input=data, capture_output=True, env=env)
            times[k].append((time.perf_counter() - t0) * 1000)
            if p.returncode != 0:
                sys.exit(f"{k}: exit {p.returncode}: {p.stderr.decode()[:300]}")
    _table(f"the agent hook, {rounds} events each, interleaved", rows, times,
           "/bin/true (floor: a process)")
    shutil.rmtree(tmp, ignore_errors=True)


def bench_wrap(top, rounds=61):
    """`skillgate wrap` per Bash call (issue 51): /bin/true and `git status`
    in a small repository, bare, under bubblewrap (the floor of a sandbox
    that starts a command: namespaces and mounts, nothing decided) and under
    wrap (trace and audit record written); and the hook's own time per
    event with sandbox_bash on (it answers with the rewritten line)."""
    sg, tmp, env = _agent_world(top, "sgbench-wrap.")
    repo = os.path.join(tmp, "home", "repo")
    os.makedirs(repo)
    for i in range(50):
        with open(os.path.join(repo, f"f{i}.c"), "w") as f:
            f.write(f"int f{i};\n")
    g = ["git", "-c", "user.name=b", "-c", "user.email=b@b.test"]
    subprocess.run(["git", "init", "-q", repo], check=True, env=env)
    subprocess.run(g + ["-C", repo, "add", "-A"], check=True, env=env)
    subprocess.run(g + ["-C", repo, "commit", "-qm", "b"], check=True, env=env)
    if os.geteuid() == 0:  # wrap runs as nobody for root without sudo: its folder is nobody's
        for d in (tmp, f"{tmp}/home"):
            os.chmod(d, 0o755)
        for d, ds, fs in os.walk(repo):
            for x in [d] + [os.path.join(d, y) for y in ds + fs]:
                os.chown(x, 65534, 65534, follow_symlinks=False)
    with open(f"{tmp}/cfg/skillgate/config.yaml", "w") as f:
        f.write("hook:\n  sandbox_bash: true\n")
    with open(f"{tmp}/cfg/skillgate/hook-policy.yaml", "w") as f:
        f.write('deny:\n  - "Bash(rm:*)"\n')
    for x in ("config.yaml", "hook-policy.yaml"):
        os.chmod(f"{tmp}/cfg/skillgate/{x}", 0o600)
    bw = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
          "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", repo, repo,
          "--chdir", repo]
    rows = {}
    for name, prog in (("/bin/true", ["/bin/true"]),
                       ("git status", ["git", "-c", "safe.directory=*", "status", "-s"])):
        rows[f"{name}: bare"] = prog
        if shutil.which("bwrap"):
            rows[f"{name}: bwrap (floor of a sandbox)"] = bw + prog
        rows[f"{name}: skillgate wrap"] = [sg, "wrap", "--prompt", "deny", "--", *prog]
    ev = json.dumps({"session_id": "bench", "cwd": repo, "hook_event_name": "PreToolUse",
                     "tool_name": "Bash", "tool_input": {"command": "git status -s"}}).encode()
    rows["hook, sandbox_bash (per event)"] = [sg, "hook"]
    rows["cat (floor: read and answer)"] = ["cat"]
    times = {k: [] for k in rows}
    for _ in range(rounds):
        for k, cmd in rows.items():
            t0 = time.perf_counter()
            p = subprocess.run(cmd, input=ev if "hook" in k or "cat" in k else b"",
                               capture_output=True, env=env, cwd=repo)
            times[k].append((time.perf_counter() - t0) * 1000)
            if p.returncode != 0:
                sys.exit(f"{k}: exit {p.returncode}: {p.stderr.decode()[:300]}")
    _table(f"skillgate wrap per Bash call, {rounds} each, interleaved", rows, times,
           "/bin/true: bare")
    for name in ("/bin/true", "git status"):
        b = statistics.median(times[f"{name}: bare"])
        w = statistics.median(times[f"{name}: skillgate wrap"])
        print(f"\n{name}: wrap adds {w - b:.1f} ms per call over bare (target: 15 ms)", end="")
        if f"{name}: bwrap (floor of a sandbox)" in times:
            f = statistics.median(times[f"{name}: bwrap (floor of a sandbox)"])
            print(f"; {w / f:.2f}x bubblewrap", end="")
    print()
    shutil.rmtree(tmp, ignore_errors=True)


# ---- load: many connections through one run's proxy; many runs through serve

CONNS_CLIENT = r"""
import socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
def once():
    s = socket.create_connection(addr)
    s.sendall(b"\x01")
    s.recv(1)
    s.close()
for _ in range(10):
    once()
print("WARM", flush=True); time.sleep(0.5)
lat = []
for _ in range(1000):
    t = time.perf_counter(); once(); lat.append(time.perf_counter() - t)
lat.sort()
print(f"SERIAL {lat[500] * 1000:.4f} {lat[990] * 1000:.4f}", flush=True); time.sleep(0.5)
t = time.perf_counter()
held = [socket.create_connection(addr) for _ in range(100)]
for s in held:
    s.sendall(b"\x01")
got = sum(len(s.recv(1)) for s in held)
print(f"HELD {got} {(time.perf_counter() - t) * 1000:.2f}", flush=True); time.sleep(0.5)
for s in held:
    s.close()
print("CLOSED", flush=True); time.sleep(3)
print("END", flush=True)
"""


def _proc_counts(pid):
    """A process's descriptors and resident memory (KiB)."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(x.split()[1]) for x in f if x.startswith("VmRSS:"))
    return fds, rss


def bench_conns(top):
    """1,000 connects in a row and 100 held at once through one run's
    proxy: latency, and the broker's descriptors and memory at each step
    (they must come back to where they were)."""
    sg = os.path.join(top, "build", "skillgate")
    srv = _server(0)
    port = srv.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="sgbench.")
    os.chmod(tmp, 0o755)
    try:
        d = _skill(tmp, "bench-conns", "python3", ["client.py", "bench.example.test", "9"],
                   "permissions:\n  network:\n    egress:\n"
                   "      - {domain: bench.example.test, ports: [9]}\n"
                   "resources: {max_runtime_seconds: 300}\n")
        with open(os.path.join(d, "client.py"), "w") as f:
            f.write(CONNS_CLIENT)
        os.chmod(os.path.join(d, "client.py"), 0o644)
        p = subprocess.Popen([sg, "run", "--prompt", "deny", "--resolve",
                              f"bench.example.test:9:127.0.0.1:{port}", d],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        seen = {}
        for line in p.stdout:
            w = line.split()
            if w and w[0] in ("WARM", "SERIAL", "HELD", "CLOSED"):
                seen[w[0]] = (w[1:], _proc_counts(p.pid))
            if w and w[0] == "END":
                seen["END"] = ([], _proc_counts(p.pid))
                break
        p.wait(timeout=60)
        assert set(seen) == {"WARM", "SERIAL", "HELD", "CLOSED", "END"}, f"the client said only {seen}"
        print(f"\n### connections through one run's proxy ({platform.node()}, {os.cpu_count()} "
              f"cores, {time.strftime('%Y-%m-%d')})\n")
        print("| step | result | broker fds | broker RSS |")
        print("|---|---|---:|---:|")
        ser, held = seen["SERIAL"][0], seen["HELD"][0]
        rows = [("after 10 connects (warm)", "", seen["WARM"][1]),
                ("after 1,000 connects in a row", f"median {ser[0]} ms, 99th {ser[1]} ms per "
                 "connect + 1-byte round trip", seen["SERIAL"][1]),
                ("100 connections held at once", f"{held[0]} of 100 answered, in {held[1]} ms",
                 seen["HELD"][1]),
                ("right after closing them", "", seen["CLOSED"][1]),
                ("3 s later", "", seen["END"][1])]
        for step, res, (fds, rss) in rows:
            print(f"| {step} | {res} | {fds} | {rss / 1024:.1f} MiB |")
        print("\nThe broker keeps each connection's events for the trace, so its memory grows "
              "with them up to the trace's caps (records/trace.h); descriptors must come back.")
    finally:
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)


class _Serve:
    """skillgate serve over pipes: initialize, then calls."""

    def __init__(self, sg):
        self.p = subprocess.Popen([sg, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        self.read()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, *msgs):
        self.p.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        assert line, "skillgate serve closed its output"
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        self.p.stdout.close()


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    except OSError:
        return []


def bench_serve(top, n=50, rounds=3):
    """n run_skill calls at once through `skillgate serve` against n
    `skillgate run`s started 16 at a time (serve's workers): time to the
    last answer, and what the server holds before and after."""
    sg, tmp = _sg_and_tmp(top)
    try:
        d = _skill(tmp, "bench-true", "/usr/bin/true", [])
        before = _leftovers(sg)
        direct, served, rss, fds = [], [], [], []
        for _ in range(rounds):
            t = time.perf_counter()
            todo = [[sg, "run", "--prompt", "deny", d] for _ in range(n)]
            running = []
            while todo or running:
                while todo and len(running) < 16:
                    running.append(subprocess.Popen(todo.pop(), stdout=subprocess.DEVNULL,
                                                    stderr=subprocess.DEVNULL))
                running[0].wait()
                assert running[0].returncode == 0, "a direct run failed"
                running.pop(0)
            direct.append((time.perf_counter() - t) * 1000)
            s = _Serve(sg)
            f0, r0 = _proc_counts(s.p.pid)
            t = time.perf_counter()
            s.send(*({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
                "name": "run_skill", "arguments": {"skill": d}}} for i in range(n)))
            answers = [s.read() for _ in range(n)]
            served.append((time.perf_counter() - t) * 1000)
            bad = [a for a in answers
                   if a.get("result", {}).get("structuredContent", {}).get("status") != "completed"]
            assert not bad, f"{len(bad)} calls not completed: {json.dumps(bad[0])[:400]}"
            time.sleep(0.2)
            f1, r1 = _proc_counts(s.p.pid)
            left = _children(s.p.pid)
            with open(f"/proc/{s.p.pid}/status") as f:
                hwm = next(int(x.split()[1]) for x in f if x.startswith("VmHWM:"))
            s.close()
            rss.append((r0, r1, hwm, len(left)))
            fds.append((f0, f1))
        time.sleep(2)
        after = _leftovers(sg)
        print(f"\n### {n} run_skill calls at once through `skillgate serve` ({platform.node()}, "
              f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}, {rounds} interleaved "
              f"rounds)\n")
        print("| what | median ms | min | max | runs/s | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        md = statistics.median(direct)
        for k, v in ((f"{n} `skillgate run`, 16 at a time (the reference)", direct),
                     (f"{n} `run_skill` calls sent at once (16 workers, the rest wait)", served)):
            m = statistics.median(v)
            print(f"| {k} | {m:.0f} | {min(v):.0f} | {max(v):.0f} | {n / m * 1000:.1f} | "
                  f"{m / md:.2f}x |")
        print(f"\nserver: RSS {rss[-1][0] / 1024:.1f} MiB before the calls, "
              f"{rss[-1][1] / 1024:.1f} after, peak {max(r[2] for r in rss) / 1024:.1f}; "
              f"descriptors {fds[-1][0]} before, {fds[-1][1]} after; children left after the "
              f"answers: {max(r[3] for r in rss)}\n")
        print("| left behind | before | after |")
        print("|---|---:|---:|")
        for k in before:
            print(f"| {k} | {before[k]} | {after[k]} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- wasm: a WASM skill against its bare runtime -----------------------

BARE_WASI = r"""
import { WASI } from 'node:wasi';
import { readFileSync } from 'node:fs';
const wasi = new WASI({ version: 'preview1', args: ['m'], env: {}, preopens: {}, returnOnExit: true });
const inst = await WebAssembly.instantiate(await WebAssembly.compile(readFileSync(process.argv[2])),
                                           wasi.getImportObject());
process.exitCode = wasi.start(inst);
"""


def _readable_by_all(top):
    """Folders 755 and files 644 below top: a run as any user reads them."""
    for root, dirs, files in os.walk(top):
        os.chmod(root, 0o755)
        for x in files:
            os.chmod(os.path.join(root, x), 0o644)


def _wasm_skill(tmp, name, wasm):
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "wasm"))
    shutil.copy(wasm, os.path.join(d, "wasm", "skill.wasm"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: benchmark\nwasm:\n  timeout_ms: 120000\n---\n")
    _readable_by_all(d)
    return d


def bench_wasm(top, rounds=5, starts=31):
    """A compute-heavy module under skillgate against the bare runtime
    (node:wasi, no sandbox) and the same C built natively (the floor); and
    start-up: a module that prints a line, against a native /bin/true skill
    and node starting with nothing to do (the runtime's own floor)."""
    sg, tmp = _sg_and_tmp(top)
    try:
        cc = [sys.executable, os.path.join(top, "scripts", "wasm_cc.py"), "clang"]
        src = os.path.join(top, "bench", "wasm_compute.c")
        hello = os.path.join(tmp, "hello.c")
        with open(hello, "w") as f:
            f.write('#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n')
        for s, o in ((src, "compute.wasm"), (hello, "hello.wasm")):
            subprocess.run(cc + [s, os.path.join(tmp, o)], check=True)
        subprocess.run(["gcc", "-O2", "-o", os.path.join(tmp, "compute"), src], check=True)
        bare = os.path.join(tmp, "bare.mjs")
        with open(bare, "w") as f:
            f.write(BARE_WASI)
        node = shutil.which("node")
        comp = _wasm_skill(tmp, "wasm-compute", os.path.join(tmp, "compute.wasm"))
        rows = {"native C, gcc -O2 (floor)": [os.path.join(tmp, "compute")],
                "bare node:wasi": [node, "--no-warnings", bare, os.path.join(tmp, "compute.wasm")],
                "skillgate run (WASM skill)": [sg, "run", "--prompt", "deny", comp]}
        times = {k: [] for k in rows}
        for _ in range(rounds):
            for k, cmd in rows.items():
                times[k].append(timed(cmd))
        _table("WASM, compute-heavy (300M rounds of FNV-1a)", rows, times, "bare node:wasi")
        hi = _wasm_skill(tmp, "wasm-hello", os.path.join(tmp, "hello.wasm"))
        true = _skill(tmp, "bench-true", "/usr/bin/true", [])
        rows = {"node -e 0 (the runtime starting, floor)": [node, "-e", "0"],
                "bare node:wasi, hello": [node, "--no-warnings", bare,
                                          os.path.join(tmp, "hello.wasm")],
                "skillgate run, native /bin/true": [sg, "run", "--prompt", "deny", true],
                "skillgate run, WASM hello": [sg, "run", "--prompt", "deny", hi]}
        times = {k: [] for k in rows}
        for _ in range(starts):
            for k, cmd in rows.items():
                times[k].append(timed(cmd))
        _table("WASM, start-up (a module printing one line)", rows, times,
               "skillgate run, native /bin/true")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _vet_registry(tmp, n):
    """n skills shaped as ClawHub keeps them (skills/OWNER/SLUG), each a
    SKILL.md whose text names its one script."""
    reg = os.path.join(tmp, "registry")
    for i in range(n):
        d = os.path.join(reg, "skills", f"owner{i % 20}", f"tool{i}")
        os.makedirs(os.path.join(d, "scripts"))
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(f"---\nname: tool{i}\ndescription: benchmark skill {i}. Use when asked.\n---\n"
                    "# Tool\n\nRun `python3 scripts/tool.py --help` to see its options; "
                    "`curl -s https://api.example.test/v1 -o out.json` fetches its data.\n" * 4)
        with open(os.path.join(d, "scripts", "tool.py"), "w") as f:
            f.write("import argparse\nargparse.ArgumentParser(description='tool').parse_args()\n")
    _readable_by_all(tmp)
    return reg


def bench_vet(top, rounds=5, n=200):
    """skillgate vet (issue 53): the static pass per skill, against reading
    the same files (the floor: cat of every file), and the dynamic pass per
    script, against the script run bare (the floor) and under bubblewrap."""
    sg, tmp = _sg_and_tmp(top)
    try:
        reg = _vet_registry(tmp, n)
        files = [os.path.join(r, f) for r, _, fs in os.walk(reg) for f in fs]
        script = files[[os.path.basename(f) for f in files].index("tool.py")]
        one = os.path.dirname(os.path.dirname(script))
        bw = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
              "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
              "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
              "--tmpfs", "/tmp", "--ro-bind", one, one]
        per_skill = {"cat of every file (floor)": ["find", reg, "-type", "f", "-exec", "cat", "{}", "+"],
                     "skillgate vet --static": [sg, "vet", reg, "--static", "-q", "--out",
                                                os.path.join(tmp, "out-static")]}
        per_script = {"python3 script --help (floor)": ["python3", script, "--help"],
                      "bwrap --unshare-all": bw + ["python3", script, "--help"],
                      "skillgate vet (one skill)": [sg, "vet", one, "-q", "--out",
                                                    os.path.join(tmp, "out-one")]}
        per_script = {k: v for k, v in per_script.items() if shutil.which(v[0]) or os.path.exists(v[0])}
        t1 = {k: [] for k in per_skill}
        t2 = {k: [] for k in per_script}
        for _ in range(rounds):
            for k, cmd in per_skill.items():
                t1[k].append(timed(cmd) / n)
            for k, cmd in per_script.items():
                t2[k].append(timed(cmd))
        _table(f"vet: the static pass, per skill ({n} skills, ms a skill)", per_skill, t1,
               "cat of every file (floor)")
        _table("vet: the dynamic pass, per script (a skill of one script, its text naming it)",
               per_script, t2, "python3 script --help (floor)")
        full = [sg, "vet", reg, "-q", "--jobs", "2", "--out", os.path.join(tmp, "out-full")]
        t = timed(full)
        print(f"\n{n} skills, static and dynamic, --jobs 2: {t:.0f} ms, {n * 60000 / t:.0f} skills a minute")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    top = sys.argv[1]
    which = sys.argv[2:] or ["discover", "egress", "route", "conns", "launch", "tui", "files", "traces",
                             "hook", "wrap", "reads", "soak", "serve", "wasm", "vet"]
    for w in which:
        if w == "discover":
            bench_discover(top)
        elif w == "egress":
            bench_egress(top)
        elif w == "route":
            bench_route(top)
        elif w == "launch":
            bench_launch(top)
        elif w == "tui":
            bench_tui(top)
        elif w == "files":
            bench_files(top)
        elif w == "traces":
            bench_traces(top)
        elif w == "hook":
            bench_hook(top)
        elif w == "wrap":
            bench_wrap(top)
        elif w == "reads":
            bench_reads(top)
        elif w == "soak":
            bench_soak(top)
        elif w == "conns":
            bench_conns(top)
        elif w == "serve":
            bench_serve(top)
        elif w == "wasm":
            bench_wasm(top)
        elif w == "vet":
            bench_vet(top)
        else:
            sys.exit(f"unknown benchmark {w}")


if __name__ == "__main__":
    main()
