"""`make demo`, the README's first command, runs to its end: every request accounted for,
no ERROR in the log."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo():
    done = subprocess.run(["make", "-s", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "42 of 42 requests accounted for." in output, output[-3000:]
    assert "] ERROR:" not in output and "Traceback" not in output, output[-3000:]
    gap = re.search(r"smallest gap measured at the server ([0-9.]+)s", output)
    assert gap is not None and float(gap.group(1)) >= 0.99, output[-3000:]  # Crawl-delay: 1 held
