"""One crawler's record files in the record folder, appended in batches.

Each crawler (each run of a crawl, each crawler of a fleet) writes files of its own,
named ``<UTC start>-<host>-<pid>``: ``.warc.gz`` (or ``.versions.jsonl``) for the policy
file versions and ``.decisions.jsonl`` for the decisions. Nothing is shared but the
folder (and, in JSON Lines, the bodies, named by their hash), so no two writers meet.
Each batch is flushed to the operating system as a whole: a crash loses the batch not
yet written, never what was. The decisions file begins with its header, one line that
says what is the same for every decision in it (``{"purposes": [...], "mode": "deny"}``, the
purposes each was judged for, ``ROBOTSTXT_USAGE``, and ``ROBOTSTXT_USAGE_MODE``), so that no
row repeats it. Beside the decisions, a page that denied a declared purpose has a row of its
own (``"kind": "page"``, grounds.page_row), written once the crawl has read the page.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy_robots.record import jsonl, warc
from scrapy_robots.record.version import encode_line

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scrapy_robots.record.version import PolicyVersion

FORMATS = ("warc", "jsonl")
DECISIONS = ".decisions.jsonl"


def crawler_name() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{socket.gethostname()}-{os.getpid()}"


class RecordWriter:
    def __init__(
        self,
        folder: str | Path,
        format: str = "warc",
        name: str | None = None,
        software: str = "",
        purposes: Sequence[str] = (),
        mode: str | None = None,
    ):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        # A folder that takes no file (read-only, another user's) fails now, at start-up,
        # not at the first write, when the crawl is under way.
        with tempfile.TemporaryFile(dir=self.folder):
            pass
        self.name = name or crawler_name()
        self.format = format
        self.software = software
        #: the purposes every decision is judged for (ROBOTSTXT_USAGE), in the decisions file's header
        self.purposes = list(purposes)
        #: what the crawl does with a denial for them (ROBOTSTXT_USAGE_MODE), in the header too
        self.mode = mode
        self._versions: Any = None
        self._version_stream: Any = None
        self._decisions: Any = None

    def write(self, versions: Iterable[PolicyVersion], decisions: Iterable[dict[str, Any]]) -> None:
        """One batch: the versions, then the decisions (which name them), each file flushed."""
        versions = list(versions)
        if versions:
            writer = self._version_writer()
            for version in versions:
                writer.write(version)
            self._version_stream.flush()
        rows = list(map(encode_line, decisions))
        if rows:
            if self._decisions is None:
                self._decisions = open(self.folder / (self.name + DECISIONS), "a", encoding="utf-8")
                header: dict[str, Any] = {"purposes": self.purposes}
                if self.mode is not None:
                    header["mode"] = self.mode
                self._decisions.write(encode_line(header) + "\n")
            self._decisions.write("\n".join(rows) + "\n")
            self._decisions.flush()

    def _version_writer(self) -> Any:
        if self._versions is None:
            if self.format == "warc":
                self._version_stream = open(self.folder / (self.name + warc.SUFFIX), "ab")
                self._versions = warc.WarcVersions(self._version_stream, self.software)
            else:
                self._version_stream = open(self.folder / (self.name + jsonl.SUFFIX), "a", encoding="utf-8")
                self._versions = jsonl.JsonlVersions(self._version_stream, self.folder)
        return self._versions

    def close(self) -> list[str]:
        """Closes the files; their names (in the folder), for the manifest to sign."""
        closed = []
        for stream in (self._version_stream, self._decisions):
            if stream is not None:
                stream.close()
                closed.append(Path(stream.name).name)
        self._versions = self._version_stream = self._decisions = None
        return closed
