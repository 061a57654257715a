"""Run `scrapy crawl` processes of the test fleet project without blocking the reactor
that serves the test sites."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.protocol import ProcessProtocol

PROJECT = Path(__file__).resolve().parent / "fleet_project"


class CrawlerHandle(ProcessProtocol):
    """One `scrapy crawl fleet` process; ``done`` fires with its result dict."""

    def __init__(self, out: str):
        self.out = out
        self.output = bytearray()
        self.done: Deferred[dict[str, Any]] = Deferred()

    def outReceived(self, data: bytes) -> None:
        self.output += data

    errReceived = outReceived

    def processEnded(self, reason: Any) -> None:
        try:
            result = json.loads(Path(self.out).read_text())
        except (OSError, ValueError):
            result = {"reason": "no result", "downloaded": [], "ignored": {}, "failed": {}, "stats": {}}
        result["exit"] = reason.value.exitCode
        result["log"] = self.output.decode("utf-8", "replace")
        self.done.callback(result)

    def kill(self) -> None:
        self.transport.signalProcess("KILL")


def start_crawler(urls: list[str], redis_url: str, **settings: Any) -> CrawlerHandle:
    out = tempfile.mktemp(prefix="fleet-", suffix=".json")
    handle = CrawlerHandle(out)
    args = [sys.executable, "-m", "scrapy", "crawl", "fleet", "-a", f"urls={','.join(urls)}", "-a", f"out={out}",
            "-s", f"REDIS_URL={redis_url}"]  # fmt: skip
    for name, value in settings.items():
        args += ["-s", f"{name}={value}"]
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    reactor.spawnProcess(handle, sys.executable, args, env=env, path=str(PROJECT))
    return handle
