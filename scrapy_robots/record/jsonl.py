"""The policy file versions as JSON Lines: one object per download in
``<crawler>.versions.jsonl``, each body once in ``bodies/<sha256>`` (shared by every
crawler writing to the folder: a body's name is its hash)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, TextIO

from scrapy_robots.record.version import encode_line

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from scrapy_robots.record.version import PolicyVersion

SUFFIX = ".versions.jsonl"
BODIES = "bodies"


class JsonlVersions:
    def __init__(self, stream: TextIO, folder: Path):
        self.stream = stream
        self.bodies = folder / BODIES
        self.bodies.mkdir(exist_ok=True)

    def write(self, version: PolicyVersion) -> None:
        if version.status is not None:
            path = self.bodies / version.sha256
            if not path.exists():
                # Whole or absent: a body is renamed into place once written.
                partial = path.with_suffix(f".{os.getpid()}.part")
                partial.write_bytes(version.body)
                partial.replace(path)
        self.stream.write(encode_line(version.fields()) + "\n")


def read_jsonl(stream: TextIO, folder: Path) -> Iterator[tuple[dict[str, Any], bytes | None]]:
    for fields in read_lines(stream):
        body = None
        if fields.get("status") is not None:
            path = folder / BODIES / fields["sha256"]
            body = path.read_bytes() if path.exists() else None
        yield fields, body


def read_lines(stream: TextIO) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file; a last line cut short by a crash is skipped."""
    for line in stream:
        if not line.endswith("\n"):
            return
        try:
            yield json.loads(line)
        except ValueError:
            continue
