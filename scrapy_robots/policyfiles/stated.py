"""What a policy file other than robots.txt states of a URL, as the answer reads it: the
interface the verdict, the grounds and the compliance record iterate (:data:`Heard`), apart
from the book that fetches the file (policyfiles/preference.py builds it on the book's
handler), so that the answer imports no lifecycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.usage import Preference


@dataclass(frozen=True)
class Stated:
    """What a file says of a URL for some purposes, in one line (a source of the grounds)."""

    purposes: tuple[str, ...]  #: the declared purposes it speaks for here
    says: str
    allowed: bool | None = None  #: None: nothing stated


class StatingFile(Protocol):
    """A policy file that states preferences, as the answer reads it
    (:class:`~scrapy_robots.policyfiles.preference.PreferenceFile` documents each member)."""

    name: str
    key: str
    meta_key: str
    record: str
    sources: tuple[str, ...]

    @property
    def tags_field(self) -> str: ...

    def needed(self, robots: RobotsEntry) -> bool: ...

    def read(self, entry: RobotsEntry) -> Any: ...

    def says(self, entry: RobotsEntry | None, request: Request, config: RobotsConfig) -> dict[str, Preference]: ...

    def denial(self, entry: RobotsEntry, denied: Preference) -> tuple[str, str]: ...

    def explain(self, entry: RobotsEntry | None, url: str, config: RobotsConfig) -> tuple[Stated, ...]: ...

    def report(self, entry: RobotsEntry | None, url: str, config: RobotsConfig, not_read: str) -> dict[str, Any]: ...


#: Each enabled file that states preferences, with its entry at the request's site (None: not read).
Heard: TypeAlias = "tuple[tuple[StatingFile, RobotsEntry | None], ...]"
