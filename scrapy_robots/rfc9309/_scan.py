"""ScannedRules: one agent's rules answered from their text, in one pass.

:class:`~scrapy_robots.rfc9309._matcher.CompiledRules` builds a structure that decides a
path in O(log n); building it costs more than a question. A site that a broad crawl's
frontier asks once in a while is better answered by reading its rules as they are: this
module does it, by the same ranks and with the matcher's own pattern tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots.rfc9309._matcher import _CONTAINS, _ENDS, _EXACT, _WILD, _compile, _wild_match

if TYPE_CHECKING:
    from scrapy_robots.rfc9309._options import Options


class ScannedRules:
    """Rules answered from their text in one pass, nothing compiled. ``text`` is one rule
    a line, ``A`` (allow) or ``D`` then the pattern as written
    (:class:`~scrapy_robots.rfc9309.AgentRules`' form), ASCII and with no percent-encoding
    (nothing to normalise). The same verdicts as
    :class:`~scrapy_robots.rfc9309._matcher.CompiledRules` built from the same rules, by
    the same ranks (the docstring of its module; here each is 2 more, the line's letter
    counted in its length): longest match ``2 * length + allow``, first match the first
    line that matches."""

    __slots__ = ("_text", "_options")

    def __init__(self, text: str, options: Options):
        self._text = text
        self._options = options

    def allows(self, path: str) -> bool:
        text = self._text
        if not text:
            return True
        options = self._options
        first = options.precedence == "first"
        wildcards = options.wildcards
        # A plain rule "A/x" or "D/x" matches when path starts with "/x": the line is a
        # prefix of "A" + path or of "D" + path, and its letter says which.
        allow_path, disallow_path = "A" + path, "D" + path
        best_rank, verdict = 0, True  # no rule matches: allowed
        for line in text.split("\n"):
            allow = line[0] == "A"
            if wildcards and ("*" in line or line[-1] == "$" or (allow and "/index.htm" in line)):
                rank = _special_rank(line, path, allow)
                if rank is None:
                    continue
            elif (allow_path if allow else disallow_path).startswith(line):
                if len(line) == 1:  # an empty rule: nothing, or (1996) "allow all"
                    if options.empty_rules != "allow-all":
                        continue
                    allow = True
                rank = 2 * len(line) + allow
            else:
                continue
            if first:
                return allow
            if rank > best_rank:
                best_rank, verdict = rank, allow
        return verdict


def _special_rank(line: str, path: str, allow: bool) -> int | None:
    """The rank of a wildcard or ``$`` rule line that matches ``path`` (or of the
    ``/dir/$`` that Google derives from ``Allow: /dir/index.html``), None if none does."""
    pattern = line[1:]
    rank = None
    if "*" in pattern or pattern[-1:] == "$":
        if _matches(path, pattern):
            rank = 2 * len(line) + allow
    elif path.startswith(pattern):
        rank = 2 * len(line) + allow
    if allow:
        slash = pattern.rfind("/")
        if pattern.startswith("/index.htm", slash):
            derived = pattern[: slash + 1] + "$"
            if _matches(path, derived):
                rank = max(rank or 0, 2 * len(derived) + 3)
    return rank


def _matches(path: str, pattern: str) -> bool:
    """Whether a wildcard or ``$`` pattern matches ``path`` (as CompiledRules files it)."""
    head, how, needs = _compile(pattern)
    length = len(head)
    if not path.startswith(head):
        return False
    # The tests of CompiledRules._best_special, which inlines them (its hot path).
    if how == _CONTAINS:
        return path.find(needs, length) >= 0  # type: ignore[arg-type]
    if how == _WILD:
        return _wild_match(path, length, needs)  # type: ignore[arg-type]
    if how == _ENDS:
        return len(path) - len(needs) >= length and path.endswith(needs)  # type: ignore[arg-type]
    if how == _EXACT:
        return len(path) == length
    return True
