#!/usr/bin/env python3
"""The CI examples (examples/nightly.yml, examples/gitlab-ci.yml) parse as YAML, do what the README
says they do, and call accelbench only with commands and options this build has.

usage: check_ci_examples.py SOURCE_DIR ACCELBENCH_BINARY
Exit 77 (skipped) without PyYAML (python3-yaml, scripts/install-deps.sh --test)."""
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("skipped: python3-yaml is not installed (scripts/install-deps.sh --test)")
    sys.exit(77)

src, binary = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def scripts_of(doc):
    """Every shell text in the document (GitHub run: blocks, GitLab script: lists)."""
    out = []
    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "run" and isinstance(v, str):
                    out.append(v)
                elif k == "script" and isinstance(v, list):
                    out.extend(s for s in v if isinstance(s, str))
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    return out


def invocations(text):
    """(command, [--options]) of every ./build/accelbench call, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    calls = []
    for m in re.finditer(r"\./build/accelbench\s+([a-z-]+)([^\n;|&]*)", joined):
        calls.append((m.group(1), re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", m.group(2))))
    return calls


help_cache = {}


def options_of(cmd):
    if cmd not in help_cache:
        p = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True)
        help_cache[cmd] = (p.returncode, p.stdout + p.stderr)
    return help_cache[cmd]


def check_calls(name, doc):
    calls = [c for s in scripts_of(doc) for c in invocations(s)]
    check(len(calls) >= 5, f"{name}: found only {len(calls)} accelbench calls")
    for cmd, opts in calls:
        rc, text = options_of(cmd)
        check(rc == 0, f"{name}: 'accelbench {cmd} --help' exited {rc}")
        for o in opts:
            check(re.search(re.escape(o) + r"\b", text) is not None,
                  f"{name}: 'accelbench {cmd}' has no option {o}")
    return calls


# --- GitHub Actions
gh = yaml.safe_load(open(f"{src}/examples/nightly.yml"))
on = gh.get("on", gh.get(True))  # YAML 1.1 reads a bare `on` as true
check("schedule" in on, "nightly.yml: no schedule")
check("accept" in on["workflow_dispatch"]["inputs"], "nightly.yml: no 'accept' input")
steps = gh["jobs"]["nightly"]["steps"]
text = "\n".join(scripts_of(gh))
calls = check_calls("nightly.yml", gh)
check(any(c == "compare" and "--only-changed" in o for c, o in calls),
      "nightly.yml: the summary does not use compare --only-changed")
check("--format junit" in re.sub(r"\\\n\s*", " ", text), "nightly.yml: no JUnit output")
check("GITHUB_STEP_SUMMARY" in text and "--format markdown" in re.sub(r"\\\n\s*", " ", text),
      "nightly.yml: markdown does not reach the job summary")
check(any("junit" in str(s.get("uses", "")) and "compare.junit.xml" in str(s.get("with", {}))
          for s in steps), "nightly.yml: no test report step reading the JUnit file")
check(re.search(r"^\s*2\)", text, re.M) is not None, "nightly.yml: exit 2 is not handled")
check("last-good-tag" in text and "inputs.accept" in text,
      "nightly.yml: the baseline is not moved, or not on acceptance")

# --- GitLab CI
gl = yaml.safe_load(open(f"{src}/examples/gitlab-ci.yml"))
job = gl["nightly"]
check(job["artifacts"]["reports"]["junit"] == "compare.junit.xml", "gitlab-ci.yml: no JUnit report")
gtext = "\n".join(scripts_of(gl))
check_calls("gitlab-ci.yml", gl)
check(re.search(r"^\s*2\)", gtext, re.M) is not None, "gitlab-ci.yml: exit 2 is not handled")
check("ACCEPT" in gtext and "last-good-tag" in gtext, "gitlab-ci.yml: no way to accept a change")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
