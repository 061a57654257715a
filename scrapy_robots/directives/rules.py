"""The directives of one list (``noindex, nofollow``), and how several sources combine."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final

#: The flags a page may set; ``none`` sets ``noindex`` and ``nofollow``.
FLAGS: Final = ("noindex", "nofollow", "noarchive", "nosnippet", "noimageindex", "noai", "noimageai")
#: Directives whose name ends at a colon and carry a value (``max-snippet:20``): never a
#: crawler's name in the legacy header grammar.
WITH_VALUE: Final = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})


@dataclass(frozen=True)
class Directives:
    """What applies to a page for this crawler. ``sources``: where each came from."""

    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False
    nosnippet: bool = False
    noimageindex: bool = False
    noai: bool = False
    noimageai: bool = False
    unavailable_after: float | None = None  #: a POSIX time: ``noindex`` after it
    sources: tuple[str, ...] = field(default=(), compare=False)

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

    def at(self, now: float) -> Directives:
        """The directives at ``now``: past ``unavailable_after``, ``noindex`` too."""
        if self.unavailable_after is not None and now >= self.unavailable_after and not self.noindex:
            return replace(self, noindex=True)
        return self


NONE: Final = Directives()


def read_directives(items: list[str], source: str) -> Directives:
    """The directives among ``items`` (one list's entries, e.g. ``["noindex", "max-snippet:20"]``),
    exact and case-insensitive; unknown ones ignored (``max-image-preview:none`` is not ``none``)."""
    flags: set[str] = set()
    until: float | None = None
    for item in items:
        name, colon, value = item.strip().partition(":")
        name = name.strip().lower()
        if colon:
            if name == "unavailable_after":
                when = parse_date(value.strip())
                if when is not None:
                    until = when if until is None else min(until, when)
            continue  # max-snippet:20, max-image-preview:none ...: not ours
        if name == "none":
            flags.update(("noindex", "nofollow"))
        elif name in FLAGS:
            flags.add(name)
    if not flags and until is None:
        return NONE
    return Directives(*(name in flags for name in FLAGS), unavailable_after=until, sources=(source,))


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
