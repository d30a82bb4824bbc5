"""Reporting to accelbench's results protocol with the Python standard library only.

accelbench opens a pipe for the program it runs and names its file descriptor in
ACCELBENCH_RESULTS_FD; each line written to it is one JSON object with one key (docs/external.md,
schemas/external-protocol.schema.json). Run outside accelbench, the lines go to stdout instead, so
the script still shows what it would report.

    from accelbench_protocol import Reporter
    rep = Reporter()
    rep.sample(seconds=0.125, items=4096, flops=3.1e12)
    rep.metric("loss", 2.31, direction="lower")
    rep.check(True, "loss is finite")
    rep.extra(framework="torch 2.5")
"""
import json
import math
import os
import sys


class Reporter:
    """One program's report: samples, metrics, one check and extra facts, as protocol lines."""

    def __init__(self):
        fd = os.environ.get("ACCELBENCH_RESULTS_FD")
        # Line-buffered: each line reaches accelbench as it is written, even if the program dies.
        self._out = os.fdopen(int(fd), "w", buffering=1) if fd else sys.stdout
        self._checked = False
        self._write({"protocol": 1})

    def _write(self, obj):
        self._out.write(json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n")

    @staticmethod
    def _count(name, value):
        if value is None:
            return None
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} per sample must be finite and >= 0, got {value}")
        return value

    def sample(self, seconds, items=None, flops=None, bytes=None):
        """One timed repetition: seconds > 0, and what it processed (per sample)."""
        seconds = float(seconds)
        if not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"sample seconds must be finite and > 0, got {seconds}")
        s = {"seconds": seconds}
        for key, value in (("items", items), ("flops", flops), ("bytes", bytes)):
            value = self._count(key, value)
            if value is not None:
                s[key] = value
        self._write({"sample": s})

    def metric(self, name, value, unit="", direction="higher"):
        """A figure of the program's own; direction "higher" or "lower" (the better way)."""
        if direction not in ("higher", "lower"):
            raise ValueError(f"direction must be higher or lower, got {direction!r}")
        self._write({"metric": {"name": str(name), "value": float(value), "unit": str(unit),
                                "direction": direction}})

    def check(self, passed, reason=""):
        """The correctness verdict; at most one per run of the program."""
        if self._checked:
            raise RuntimeError("check() was already reported")
        self._checked = True
        self._write({"check": {"passed": bool(passed), "reason": str(reason)}})

    def extra(self, **facts):
        """Free-form facts stored with the run (JSON values)."""
        self._write({"extra": facts})

    def close(self):
        if self._out is not sys.stdout:
            self._out.close()
