"""The record signed: each file a crawl closes, its SHA-256 chained into ``signatures.jsonl``
beside it, one line per file, each line signed (Ed25519, with the crawl's Web Bot Auth key),
and the whole checked back (``scrapy robots --record DIR --verify``; docs/compliance.rst).

A line is the canonical JSON (keys sorted, no spaces, ASCII) of the file's name, digest and
size, the SHA-256 of the line before it (``prev``; none for the first), its place (``n``),
when it was signed, the key's thumbprint and the signature over the same object without
``sig``. A changed byte in a file breaks its digest; in the manifest, its line's form or
signature and the next line's ``prev``; a line taken out or put in, the chain.

Pure: no key is read here. A crawl passes its key (anything with ``keyid`` and
``sign(bytes)``), the command a function that checks a signature by key id.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from scrapy_robots.record import jsonl, warc
from scrapy_robots.record.writer import DECISIONS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

try:  # POSIX: the crawlers of a fleet that share a folder append one at a time
    import fcntl
except ImportError:  # pragma: no cover - Windows: one crawler per folder
    fcntl = None  # type: ignore[assignment]

#: The manifest's name, in the record folder.
MANIFEST: Final = "signatures.jsonl"
#: The signature algorithm of every line (the only one the crawl's key can make).
ALG: Final = "ed25519"
#: The members of a line, ``sig`` aside: a line with another set is not one this wrote.
FIELDS: Final = frozenset({"n", "file", "sha256", "size", "prev", "signed_at", "keyid", "alg"})
#: The names of the files a crawl writes, which the manifest must list.
RECORD_SUFFIXES: Final = (warc.SUFFIX, jsonl.SUFFIX, DECISIONS)

#: What a problem is about: a record file's bytes changed, a file the manifest does not list,
#: a file it lists that is gone, the manifest itself edited (or signed by a key not given).
CHANGED, ADDED, REMOVED, EDITED = "changed", "added", "removed", "manifest edited"


class Signer(Protocol):
    """The crawl's key, as signing/keys.py's ``SigningKey`` is."""

    keyid: str

    def sign(self, data: bytes) -> bytes: ...


def canonical(obj: dict[str, Any]) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest_of(path: Path) -> tuple[str, int]:
    """A file's SHA-256 (hex) and size, read in blocks: a WARC file may be large."""
    sha = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            sha.update(block)
            size += len(block)
    return sha.hexdigest(), size


def _line_digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def sign_files(folder: str | Path, names: Iterable[str], key: Signer, now: float | None = None) -> list[dict[str, Any]]:
    """Appends one signed line per file in ``names`` (closed, in ``folder``) to the
    manifest, chained to its last line; the lines written."""
    folder = Path(folder)
    written: list[dict[str, Any]] = []
    with open(folder / MANIFEST, "a+b") as f:
        if fcntl is not None:
            fcntl.flock(f, fcntl.LOCK_EX)  # released when the file is closed
        f.seek(0)
        lines = f.read().split(b"\n")
        if lines[-1]:  # a line cut short (a crash mid-write): the next one starts on its own
            f.write(b"\n")
        else:
            lines.pop()
        prev = _line_digest(lines[-1]) if lines else None
        n = len(lines)
        for name in names:
            sha, size = digest_of(folder / name)
            entry: dict[str, Any] = {
                "n": n,
                "file": name,
                "sha256": sha,
                "size": size,
                "prev": prev,
                "signed_at": round(time.time() if now is None else now, 3),
                "keyid": key.keyid,
                "alg": ALG,
            }
            entry["sig"] = base64.b64encode(key.sign(canonical(entry).encode("ascii"))).decode("ascii")
            line = canonical(entry).encode("ascii")
            f.write(line + b"\n")
            prev, n = _line_digest(line), n + 1
            written.append(entry)
        f.flush()
        os.fsync(f.fileno())
    return written


@dataclass(frozen=True)
class Problem:
    what: str  #: CHANGED, ADDED, REMOVED or EDITED
    name: str  #: the record file (or the manifest) it is about
    detail: str

    def __str__(self) -> str:
        return f"{self.name}: {self.what}: {self.detail}"


@dataclass
class Verified:
    files: dict[str, dict[str, Any]]  #: each file a valid line signs, its line
    problems: list[Problem]
    keyids: set[str]  #: the keys the valid lines were signed with


def record_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name.endswith(RECORD_SUFFIXES))


def verify(folder: str | Path, check: Callable[[str, bytes, bytes], bool | None]) -> Verified:
    """Every line's form, signature and place in the chain, every listed file's digest, the
    files not listed, and (JSON Lines format) every body against its name. ``check`` says
    whether a signature holds: (keyid, data, signature) -> True, False, None (a key not given)."""
    folder = Path(folder)
    path = folder / MANIFEST
    problems: list[Problem] = []
    files: dict[str, dict[str, Any]] = {}
    claimed: set[str] = set()  # named by a line that does not hold: neither verified nor "added"
    keyids: set[str] = set()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = None
        problems.append(Problem(EDITED, MANIFEST, "no manifest: the record is not signed (or it was removed)"))
    if raw is not None:
        lines = raw.split(b"\n")
        if lines[-1]:
            problems.append(Problem(EDITED, MANIFEST, f"line {len(lines)} does not end: cut short or edited"))
        else:
            lines.pop()
        prev = None
        for index, line in enumerate(lines):
            entry, why = _line(line, index, prev, check)
            prev = _line_digest(line)
            name = entry.get("file") if entry is not None else None
            if why is not None:
                problems.append(Problem(EDITED, MANIFEST, f"line {index + 1}: {why}"))
                if isinstance(name, str):
                    claimed.add(name)
                continue
            assert entry is not None
            keyids.add(entry["keyid"])
            files[entry["file"]] = entry
    for name, entry in files.items():
        try:
            sha, size = digest_of(folder / name)
        except FileNotFoundError:
            problems.append(Problem(REMOVED, name, f"signed at line {entry['n'] + 1}, no longer in the folder"))
            continue
        if sha != entry["sha256"]:
            problems.append(
                Problem(CHANGED, name, f"its SHA-256 is {sha}, not the {entry['sha256']} signed ({size} bytes now)")
            )
    for name in record_files(folder):
        if name in files:
            continue
        if name in claimed:
            problems.append(Problem(EDITED, name, "not verified: its line in the manifest does not hold"))
        else:
            problems.append(Problem(ADDED, name, "in the folder, not in the manifest (added, or never signed)"))
    bodies = folder / jsonl.BODIES
    if bodies.is_dir():
        # A body's name is its SHA-256, and the signed versions file names it.
        for body in sorted(bodies.iterdir()):
            if body.is_file() and not body.name.endswith(".part") and digest_of(body)[0] != body.name:
                problems.append(Problem(CHANGED, f"{jsonl.BODIES}/{body.name}", "its bytes are not its SHA-256"))
    return Verified(files, problems, keyids)


def _line(
    line: bytes, index: int, prev: str | None, check: Callable[[str, bytes, bytes], bool | None]
) -> tuple[dict[str, Any] | None, str | None]:
    """A line's entry and None, or what is wrong with it (the entry too if it parses)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None, "not JSON"
    if not isinstance(entry, dict):
        return None, "not a manifest line"
    if set(entry) != FIELDS | {"sig"}:
        return entry, "not a manifest line (its members are not a signed line's)"
    if canonical(entry).encode("ascii") != line:
        return entry, "not as it was signed (its bytes differ from its canonical form)"
    if entry["alg"] != ALG or not isinstance(entry["sig"], str) or not isinstance(entry["keyid"], str):
        return entry, "not an Ed25519 signature"
    unsigned = {name: value for name, value in entry.items() if name != "sig"}
    try:
        signature = base64.b64decode(entry["sig"], validate=True)
    except ValueError:
        return entry, "its signature is not base64"
    valid = check(entry["keyid"], canonical(unsigned).encode("ascii"), signature)
    if valid is None:
        return entry, f"signed with the key {entry['keyid']}, which is not one given"
    if not valid:
        return entry, "its signature does not verify"
    if entry["n"] != index or entry["prev"] != prev:
        return entry, "out of the chain: a line before it was removed, added or reordered"
    return entry, None
