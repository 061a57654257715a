"""bench/fleet_capacity.py, the fleet's capacity benchmark, keeps working: its three parts at
their smallest, and the agreement between a real crawl and the save path that stands for one
at 10^5 sites."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_smallest_run_prints_bytes_commands_reservations_and_sizing():
    run = subprocess.run(
        [
            sys.executable,
            "bench/fleet_capacity.py",
            *("--crawl-sites", "150", "--sites", "150"),
            *("--cmd-sites", "10", "--pages", "3"),
            *("--crawlers", "1", "--seconds", "2"),
            *("--crawl-timeout", "90"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert "KILLED" not in out and "FALLBACKS" not in out and "failed" not in out, out
    # 1. The same 150 sites, crawled and written through the save path, cost the same.
    assert "save path vs crawl at 150 sites" in out and "(keys agree within 5 %)" in out, out
    crawl = re.search(r"^crawl +150 +[\d,]+ +([\d,]+) ", out, re.M)
    assert crawl and 1000 < int(crawl[1].replace(",", "")) < 100_000, out
    families = out.split("Key families", 1)[1].split("save path vs crawl", 1)[0]
    assert "robots.txt records" in families and "tdmrep.json records" in families and "pace" in families, out
    # 2. Both crawls counted; the pace's reservations only where there is a Crawl-delay.
    without, with_delay = out.split("without a Crawl-delay:", 1)[1].split("with Crawl-delay:", 1)
    assert "robots.txt fetched 10x" in without and "robots.txt fetched 10x" in with_delay, out
    assert re.search(r"^TOTAL ours +[\d,]+", without, re.M) and re.search(r"^TOTAL scrapy-redis", without, re.M), out
    assert not re.search(r"^pace ", without, re.M), out
    assert re.search(r"^pace +[1-9][\d,]* ", with_delay, re.M), out
    # 3. Reservations were made, without errors, and Redis's CPU measured.
    reserve = re.search(r"^1 +([\d,]+) +[\d,]+ +\d+% +[\d,]+ +[\d.]+ +[\d.]+ +(\d+)$", out, re.M)
    assert reserve and int(reserve[1].replace(",", "")) > 100 and reserve[2] == "0", out
    assert re.search(r"^10,000,000 +30,000,000 +[\d,.]+ GiB", out, re.M), out
