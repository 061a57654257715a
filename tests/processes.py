"""Run `scrapy crawl` / `scrapy runspider` as real processes without blocking the
reactor that serves the test sites; signal them as a user would (Ctrl-C is SIGINT)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.protocol import ProcessProtocol

HERE = Path(__file__).resolve().parent
#: A spider that requests the URLs it is given and writes what became of each.
RECORDING_SPIDER = HERE / "spiders" / "recording.py"


class CrawlerHandle(ProcessProtocol):
    """One crawl process; ``done`` fires with its result dict: the spider's record
    (downloaded, ignored, failed, stats, reason), ``exit``, ``log`` and ``ended_at``."""

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
        result["ended_at"] = time.monotonic()
        self.done.callback(result)

    def signal(self, name: str) -> float:
        """Send a signal ("INT", "TERM", "KILL"); return when it was sent."""
        self.transport.signalProcess(name)
        return time.monotonic()

    def kill(self) -> None:
        self.signal("KILL")


def start_process(args: list[str], out: str, cwd: Path, pythonpath: str | Path | None = None) -> CrawlerHandle:
    handle = CrawlerHandle(out)
    env = {**os.environ}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    reactor.spawnProcess(handle, sys.executable, [sys.executable, "-m", "scrapy", *args], env=env, path=str(cwd))
    return handle


def result_file(prefix: str) -> str:
    return tempfile.mktemp(prefix=prefix, suffix=".json")


def settings_args(settings: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in settings.items():
        args += ["-s", f"{name}={json.dumps(value) if isinstance(value, dict) else value}"]
    return args


def run_spider(urls: list[str], cwd: Path, **settings: Any) -> CrawlerHandle:
    """`scrapy runspider` of the recording spider over ``urls``, outside any project."""
    out = result_file("crawl-")
    urls_file = result_file("urls-")
    Path(urls_file).write_text("\n".join(urls))
    args = ["runspider", str(RECORDING_SPIDER), "-a", f"urls_file={urls_file}", "-a", f"out={out}"]
    return start_process(args + settings_args(settings), out, cwd)


def copy_checkout(dest: Path) -> Path:
    """The checkout's sources at ``dest``, without what a build or a venv left there: what
    pip or ``python -m build`` would build from a clean clone."""
    import shutil

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(
        root,
        dest,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "build", "dist", "_build", "*.egg-info", "__pycache__", ".mypy_cache", ".hypothesis"
        ),
    )
    return dest
