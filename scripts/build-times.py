#!/usr/bin/env python3
"""Where a build's time went, from Ninja's log (build/.ninja_log).

Usage: scripts/build-times.py [BUILD_DIR] [--top N]

Prints the wall seconds of every compile and link step (the newest of each output), summed per CMake target
(the CMakeFiles/<target>.dir part of each output), the slowest translation units, and the sum over
all steps (CPU-seconds of the compilers when the machine was otherwise idle; on a loaded machine
each step also holds the time it waited for a core). Read it with `-ftime-trace` (clang) on the
slowest units to see which headers and instantiations cost the most.
"""
import collections
import os
import re
import sys


def last_build_steps(log_path):
    """(seconds, output) of each output's newest step in the log.

    Ninja appends a line per step it ran; a step run again (a rebuild) has a newer line, which
    replaces the older one here. After a cold build in an empty folder, that is the whole build.
    """
    steps = {}
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4:
                continue
            start, end, output = int(parts[0]), int(parts[1]), parts[3]
            steps[output] = (end - start) / 1000.0
    return steps


def target_of(output):
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
    if m:
        return m.group(1)
    return os.path.basename(output)


def main(argv):
    build, top = "build", 15
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--top":
            top = int(args.pop(0))
        else:
            build = a
    log = os.path.join(build, ".ninja_log")
    if not os.path.exists(log):
        print(f"build-times: no {log} (build with Ninja first: scripts/build.sh)", file=sys.stderr)
        return 2
    steps = last_build_steps(log)
    per_target = collections.Counter()
    for output, s in steps.items():
        per_target[target_of(output)] += s
    total = sum(steps.values())
    print(f"{len(steps)} steps, {total:.0f} s summed over steps")
    print(f"\nslowest targets (sum of their steps):")
    for t, s in per_target.most_common(top):
        print(f"  {s:8.1f} s  {100 * s / total:5.1f}%  {t}")
    print(f"\nslowest steps:")
    for output, s in sorted(steps.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {s:8.1f} s  {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
