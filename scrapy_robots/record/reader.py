"""A record folder read back (or several: a fleet's crawlers each wrote their own files),
without the network: which version of a site's policy file applied at a time, what was
decided, and a per-site summary."""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy_robots.record import DIRECTIVES, ITEMS_DROPPED, PAGE, REVALIDATED, TAGGED, jsonl, warc
from scrapy_robots.record.version import ROBOTS_TXT, TDMREP_JSON
from scrapy_robots.record.writer import DECISIONS

if TYPE_CHECKING:
    from collections.abc import Iterable


@dataclass
class Version:
    """One download of a policy file, as recorded (``fields``: PolicyVersion.fields())."""

    fields: dict[str, Any]
    body: bytes | None
    source: str  #: the record file it was read from

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class SiteSummary:
    site: str
    versions: set[str] = field(default_factory=set)  #: distinct robots.txt bodies (SHA-256)
    fetches: int = 0
    #: refreshes of its robots.txt answered 304: checked, no new version (not in ``fetches``)
    revalidated: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    allowed: int = 0
    denied: Counter[str] = field(default_factory=Counter)  #: denials by reason
    tdmrep: set[str] = field(default_factory=set)  #: tdmrep.json outcomes (parse, allow, ...)
    #: ``purpose (source)``: requests denied by a reservation; ``purpose (source, items dropped)``:
    #: items of the pages whose own header, meta tag or directive denied; ``purpose (source,
    #: tagged)``: requests (or pages) a crawl in tag mode kept, tagged
    reservations: Counter[str] = field(default_factory=Counter)
    #: what the crawl did for the pages' robots directives: ``items dropped (noindex)``,
    #: ``requests not followed (nofollow)``... -> how many
    directives: Counter[str] = field(default_factory=Counter)


class Record:
    def __init__(self, folders: Iterable[str | Path]):
        self.versions: dict[tuple[str, str], list[Version]] = defaultdict(list)
        self.bodies: dict[str, bytes] = {}
        self.decisions: list[dict[str, Any]] = []
        #: the pages that denied a declared purpose (rows of ``"kind": "page"``), by time
        self.pages: list[dict[str, Any]] = []
        #: the pages whose robots directives the crawl acted on (``"kind": "directives"``), by time
        self.directives: list[dict[str, Any]] = []
        #: the refreshes answered 304 (``"kind": "revalidated"``): the file checked, its version kept
        self.revalidations: list[dict[str, Any]] = []
        self.files = 0
        for folder in map(Path, folders):
            if folder.is_file():
                raise ValueError(f"{folder} is a file: --record names the folder ROBOTSTXT_RECORD wrote")
            if not folder.is_dir():
                raise ValueError(f"{folder}: no such record folder")
            for path in sorted(folder.iterdir()):
                self._read(path, folder)
        seen: set[tuple[str, float, str]] = set()
        for key, versions in self.versions.items():
            # A fleet's crawlers may hold the same download (a copy of one file read twice): once.
            unique = []
            for version in sorted(versions, key=lambda v: v.fetched_at):
                mark = (key[0] + key[1], version.fetched_at, version.sha256)
                if mark not in seen:
                    seen.add(mark)
                    unique.append(version)
            self.versions[key] = unique
        self.decisions.sort(key=lambda row: row["t"])
        self.pages.sort(key=lambda row: row["t"])
        self.directives.sort(key=lambda row: row["t"])
        self.revalidations.sort(key=lambda row: row["t"])

    def _read(self, path: Path, folder: Path) -> None:
        name = path.name
        if name.endswith(warc.SUFFIX):
            with path.open("rb") as stream:
                self._add(warc.read_warc(stream), name)
        elif name.endswith(jsonl.SUFFIX):
            with path.open(encoding="utf-8") as text:
                self._add(jsonl.read_jsonl(text, folder), name)
        elif name.endswith(DECISIONS):
            with path.open(encoding="utf-8") as text:
                self._add_decisions(jsonl.read_lines(text))
        else:
            return
        self.files += 1

    def _add(self, versions: Iterable[tuple[dict[str, Any], bytes | None]], source: str) -> None:
        for fields, body in versions:
            if body is not None:
                self.bodies[fields["sha256"]] = body
            self.versions[(fields["file"], fields["site"])].append(Version(fields, body, source))

    def _add_decisions(self, lines: Iterable[dict[str, Any]]) -> None:
        """A decisions file's rows, each with the purposes it was judged for: the file's header
        says them once (its first line, the one without a time); a row of a file written
        before there was a header carries its own."""
        purposes: list[str] | None = None
        mode: str | None = None
        for row in lines:
            if "t" not in row:
                purposes = row.get("purposes") or None
                mode = row.get("mode")  # absent from files written before page rows: deny
                continue
            if purposes is not None and "purposes" not in row:
                row["purposes"] = list(purposes)
            if mode is not None and "mode" not in row:
                row["mode"] = mode
            kind = row.get("kind")
            if kind is None:
                self.decisions.append(row)
            elif kind == PAGE:
                self.pages.append(row)
            elif kind == DIRECTIVES:
                self.directives.append(row)
            elif kind == REVALIDATED:
                self.revalidations.append(row)
            # A kind a later version writes: not read here, and no decision either.

    def sites(self) -> list[str]:
        return sorted({site for _, site in self.versions} | {row["site"] for row in self.decisions})

    def version_at(self, site: str, at: float, file: str = ROBOTS_TXT) -> Version | None:
        """The download of ``site``'s ``file`` that governed at ``at``: the last one before it."""
        versions = self.versions.get((file, site), [])
        index = bisect.bisect_right([v.fetched_at for v in versions], at)
        return versions[index - 1] if index else None

    def revalidated_at(self, site: str, since: float, at: float, file: str = ROBOTS_TXT) -> float | None:
        """When ``site``'s ``file`` was last found not modified (a refresh answered 304)
        after ``since`` (the download that governs) and by ``at``; None if it was not."""
        checked = None
        for row in self.revalidations:
            if row["t"] > at:
                break
            if row["t"] > since and row["site"] == site and row["file"] == file:
                checked = row["t"]
        return checked

    def body_of(self, sha256: str | None) -> bytes | None:
        return None if sha256 is None else self.bodies.get(sha256)

    def agent_at(self, site: str, at: float) -> str | None:
        """The product token the crawl obeyed as at ``site``, in its last decision before ``at``."""
        agent = None
        for row in self.decisions:
            if row["t"] > at:
                break
            if row["site"] == site:
                agent = row["agent"]
        return agent

    def decisions_for(self, url: str) -> list[dict[str, Any]]:
        return [row for row in self.decisions if row["url"] == url]

    def pages_for(self, url: str) -> list[dict[str, Any]]:
        """The page rows of ``url``: what the page itself denied, and what the crawl did."""
        return [row for row in self.pages if row["url"] == url]

    def directives_for(self, url: str) -> list[dict[str, Any]]:
        """The directives rows of ``url``: what the page's robots directives said, and what the crawl did."""
        return [row for row in self.directives if row["url"] == url]

    def not_followed(self, url: str) -> list[dict[str, Any]]:
        """The directives rows of the pages whose links to ``url`` the crawl did not follow."""
        return [row for row in self.directives if url in (row.get("not_followed") or ())]

    def summary(self) -> list[SiteSummary]:
        sites: dict[str, SiteSummary] = {}

        def of(site: str) -> SiteSummary:
            return sites.setdefault(site, SiteSummary(site))

        for (file, site), versions in self.versions.items():
            summary = of(site)
            for version in versions:
                if file == TDMREP_JSON:
                    summary.tdmrep.add(version.action)
                    continue
                summary.fetches += 1
                summary.actions[version.action] += 1
                if version.status is not None:
                    summary.versions.add(version.sha256)
        for row in self.revalidations:
            if row["file"] == ROBOTS_TXT:
                of(row["site"]).revalidated += 1
        for row in self.decisions:
            summary = of(row["site"])
            if row["allowed"]:
                summary.allowed += 1
                # Tag mode: the site's files denied a purpose, the request went on, tagged.
                for purpose, tag in (row.get("usage") or {}).items():
                    if tag.get("decision") == "deny":
                        summary.reservations[f"{purpose} ({tag['source']}, {TAGGED})"] += 1
                continue
            summary.denied[row["reason"]] += 1
            denied = row.get("usage_denied")
            if denied is not None:
                summary.reservations[f"{denied['purpose']} ({denied['source']})"] += 1
        for row in self.pages:
            # The page's own: its items dropped (counted as the crawl's stat counts them), or tagged.
            denied, did = row["denied"], row["did"]
            what = f"{denied['purpose']} ({denied['source']}, {did})"
            of(row["site"]).reservations[what] += row["items"] if did == ITEMS_DROPPED else 1
        for row in self.directives:
            of(row["site"]).directives.update(row["did"])
        return [sites[site] for site in sorted(sites)]
