#!/usr/bin/env python3
"""Fails on an #include that points up or sideways against the layer diagram of docs/architecture.md.

The diagram (the first fenced block under "## Layers") is read as it stands: each line names the
modules of one layer (words such as harness/core or workloads/gemm), layers are listed top to
bottom, and modules named on one line share a layer. A module is the first two parts of a path
(workloads/attention/cuda belongs to workloads/attention; under harness/app, the faces' folder, the
first three: harness/app/cli). A file may include its own module and
the modules of the layers below; an include of a module of the same layer (sideways) or of a layer
above (up) is a violation, unless docs/layers-allowed.txt lists the pair with its reason. An
allowed pair may name the one file it is allowed from (harness/app/cli/serve_commands.cpp -> harness/app/server):
the same include from any other file of the module is a violation. Every allowed pair must also be
named in docs/architecture.md as `FROM -> TO`, so that the doc, the list and this check agree.
Reporters and importers read and write the result model only: an include of a workload, the store,
measure or device from reporters/ or importers/ is a violation too, although those layers are below
(a reporter may draw with reporters/html, the HTML kit below it).

Usage: scripts/check-layers.py [--root DIR] [--count]   (exit 1 on a violation; --count prints
the number of violations, allowed ones included, and always exits 0)."""
import argparse
import os
import re
import sys

MODULE = re.compile(r"\b((?:harness/app|harness|importers|kernels|reporters|workloads)/[a-z_]+)")
# harness/app holds the faces (the command line, the server) and what only they use: its modules are
# one level deeper (harness/app/cli), the ground floor's are the other folders of harness/.
FACES = "harness/app/"
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:harness|importers|kernels|reporters|workloads)/[^"]+)"')
RESULT_MODEL_ONLY = {"harness/core", "harness/compare"}
# The reporters' HTML kit (escaping, numbers, charts, the stylesheet) holds no rule of its own about
# results: a reporter may draw with it.
HTML_KIT = "reporters/html"
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".inl", ".h", ".in")


def read_layers(doc):
    text = open(doc, encoding="utf-8").read()
    at = text.find("## Layers")
    if at < 0:
        sys.exit(f"check-layers: {doc} has no '## Layers' section")
    block = re.search(r"```\n(.*?)```", text[at:], re.S)
    if not block:
        sys.exit(f"check-layers: the Layers section of {doc} has no diagram")
    layers = {}
    level = 0
    for line in block.group(1).splitlines():
        names = MODULE.findall(line.split("  ")[0] if "  " in line.strip() else line)
        if not names:
            continue
        level += 1
        for n in names:
            layers[n] = level  # 1 = top
    return layers


def module_of(path):
    parts = path.split("/")
    depth = 3 if path.startswith(FACES) else 2
    return "/".join(parts[:depth]) if len(parts) >= depth else path


def read_allowed(path):
    allowed = {}
    if not os.path.exists(path):
        return allowed
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"(\S+)\s*->\s*(\S+)", line)
        if not m:
            sys.exit(f"check-layers: {path}: cannot read '{raw.strip()}' (want: FROM -> TO  # reason)")
        allowed[(m.group(1), m.group(2))] = raw.split("#", 1)[1].strip() if "#" in raw else ""
    return allowed


def allowed_pair(violation, allowed):
    """The entry of docs/layers-allowed.txt that allows a violation: (file, TO) or (module, TO)."""
    path, _, src, dst, _ = violation
    for frm in (path, src):
        if (frm, dst) in allowed:
            return (frm, dst)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--count", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    layers = read_layers(os.path.join(root, "docs", "architecture.md"))
    allowed = read_allowed(os.path.join(root, "docs", "layers-allowed.txt"))
    violations, unknown = [], set()
    for top in ("harness", "importers", "kernels", "reporters", "workloads"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(d, f), root)
                src = module_of(path)
                if src not in layers:
                    unknown.add(src)
                    continue
                for n, line in enumerate(open(os.path.join(root, path), encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    dst = module_of(m.group(1))
                    if dst == src:
                        continue
                    if dst not in layers:
                        unknown.add(dst)
                        continue
                    if layers[dst] <= layers[src]:
                        kind = "up" if layers[dst] < layers[src] else "sideways"
                        violations.append((path, n, src, dst, kind))
                    elif src.startswith(("reporters/", "importers/")) and dst not in RESULT_MODEL_ONLY \
                            and not (src.startswith("reporters/") and dst == HTML_KIT):
                        violations.append((path, n, src, dst, "reporters and importers use the result model only"))
    if args.count:
        print(len(violations))
        return 0
    bad = 0
    for path, n, src, dst, kind in violations:
        if allowed_pair((path, n, src, dst, kind), allowed) is not None:
            continue
        bad += 1
        print(f"{path}:{n}: {src} includes {dst} ({kind}; docs/architecture.md)")
    for u in sorted(unknown):
        bad += 1
        print(f"check-layers: module {u} is not in the diagram of docs/architecture.md")
    used = {allowed_pair(v, allowed) for v in violations} - {None}
    for pair in sorted(set(allowed) - used):
        bad += 1
        print(f"check-layers: docs/layers-allowed.txt allows {pair[0]} -> {pair[1]}, which no include needs any more")
    text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    for frm, to in sorted(allowed):
        if f"`{frm} -> {to}`" not in text:
            bad += 1
            print(f"check-layers: docs/layers-allowed.txt allows {frm} -> {to}, which docs/architecture.md "
                  f"does not name (as `{frm} -> {to}`, with the reason)")
    kept = len(violations) - sum(1 for v in violations if allowed_pair(v, allowed) is None)
    print(f"check-layers: {len(layers)} modules in {max(layers.values())} layers; "
          f"{bad} violation(s), {kept} allowed include(s) listed in docs/layers-allowed.txt")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
