"""skillgate benchmarks: medians, min/max and ratios, as a markdown table."""
import os
import platform
import shutil
import statistics
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


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
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


def main():
    top = sys.argv[1]
    which = sys.argv[2:] or ["discover"]
    for w in which:
        if w == "discover":
            bench_discover(top)
        else:
            sys.exit(f"unknown benchmark {w}")


if __name__ == "__main__":
    main()
