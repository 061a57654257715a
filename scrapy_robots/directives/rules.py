"""The directives of one list (``noindex, nofollow``), and how several sources combine."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Final

#: The flags a page may set; ``none`` sets ``noindex`` and ``nofollow``.
FLAGS: Final = ("noindex", "nofollow", "noarchive", "nosnippet", "noimageindex", "noai", "noimageai")
#: Other crawlers' names for a flag: Bing's ``nocache`` is its ``noarchive``.
ALIASES: Final = {"nocache": "noarchive"}
#: Directives whose name ends at a colon and carry a value (``max-snippet:20``): never a
#: crawler's name in the legacy header grammar.
WITH_VALUE: Final = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})


@dataclass(frozen=True)
class Directives:
    """What applies to a page for this crawler. ``sources``: ``(directive, source)`` pairs,
    where each came from (``("noindex", "X-Robots-Tag")``)."""

    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False
    nosnippet: bool = False
    noimageindex: bool = False
    noai: bool = False
    noimageai: bool = False
    unavailable_after: float | None = None  #: a POSIX time: ``noindex`` after it
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __or__(self, other: Directives) -> Directives:
        """The most restrictive of both: every flag either sets, the earlier date."""
        dates = [d for d in (self.unavailable_after, other.unavailable_after) if d is not None]
        return Directives(
            *(getattr(self, name) or getattr(other, name) for name in FLAGS),
            unavailable_after=min(dates) if dates else None,
            sources=self.sources + tuple(s for s in other.sources if s not in self.sources),
        )

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in FLAGS) or self.unavailable_after is not None

    @property
    def names(self) -> tuple[str, ...]:
        """The flags set, in :data:`FLAGS` order."""
        return tuple(name for name in FLAGS if getattr(self, name))

    def source_of(self, name: str) -> str | None:
        """Where ``name`` (a flag, or ``unavailable_after``) was first read; None if unset."""
        return next((source for flag, source in self.sources if flag == name), None)

    def at(self, now: float) -> Directives:
        """The directives at ``now``: past ``unavailable_after``, ``noindex`` too."""
        if self.unavailable_after is not None and now >= self.unavailable_after and not self.noindex:
            source = self.source_of("unavailable_after") or "unavailable_after"
            return replace(self, noindex=True, sources=(*self.sources, ("noindex", source)))
        return self

    def as_meta(self) -> dict[str, Any]:
        """The plain-data form of ``response.meta["robotstxt_directives"]``: each
        directive set, with the sources that set it; ``unavailable_after`` as ISO 8601."""
        meta: dict[str, Any] = {}
        for flag, source in self.sources:
            meta.setdefault(flag, []).append(source)
        if self.unavailable_after is not None:
            when = datetime.fromtimestamp(self.unavailable_after, UTC).isoformat()
            meta["unavailable_after"] = {"date": when, "sources": meta.pop("unavailable_after", [])}
        return meta


NONE: Final = Directives()


def read_directives(items: list[str], source: str, malformed: list[str] | None = None) -> Directives:
    """The directives among ``items`` (one list's entries, e.g. ``["noindex", "max-snippet:20"]``),
    exact and case-insensitive; unknown ones ignored (``max-image-preview:none`` is not ``none``).
    An ``unavailable_after`` whose date does not read is ignored and, when ``malformed`` is
    given, said there."""
    flags: set[str] = set()
    until: float | None = None
    for item in items:
        name, colon, value = item.strip().partition(":")
        name = name.strip().lower()
        if colon:
            if name == "unavailable_after":
                when = parse_date(value.strip())
                if when is None and malformed is not None:
                    malformed.append(f"{source}: unavailable_after date {value.strip()!r} does not read")
                elif when is not None:
                    until = when if until is None else min(until, when)
            continue  # max-snippet:20, max-image-preview:none ...: not ours
        if name == "none":
            flags.update(("noindex", "nofollow"))
        elif name in ALIASES:
            flags.add(ALIASES[name])
        elif name in FLAGS:
            flags.add(name)
    if not flags and until is None:
        return NONE
    sources = tuple((name, source) for name in FLAGS if name in flags)
    if until is not None:
        sources += (("unavailable_after", source),)
    return Directives(*(name in flags for name in FLAGS), unavailable_after=until, sources=sources)


def parse_date(text: str) -> float | None:
    """``unavailable_after``'s date: RFC 822/850/1123 (Google's ``25 Jun 2010 15:00:00
    PST`` is one) or ISO 8601; None when neither reads it. A date without a zone is UTC."""
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()
