"""A group's rules compiled once into a structure that decides a path quickly.

Every rule is filed under its *head*, the literal text before its first
wildcard: a rule can only match a path that starts with its head. So the
rules are bucketed by head, and a decision looks up ``path[:n]`` for each
distinct head length ``n``: a few dict lookups instead of a scan of every
rule, however many rules there are (a 20,000-rule file included).

Each rule gets a *rank*, an integer where larger wins, which folds the
precedence option into one comparison:

- longest match: ``2 * priority + allow`` (priority is the length of the
  normalised pattern, RFC 9309; ``Allow`` wins ties);
- first match: ``-line``.

Buckets are sorted by rank, and each length level knows the best rank left
in it and below, so the walk stops as soon as nothing left can win.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

from scrapy_robots.rfc9309._url import normalize

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy_robots.rfc9309._options import Options


class Rule(NamedTuple):
    """One ``Allow`` or ``Disallow`` line."""

    #: 1-based line number in the file.
    line: int
    #: The verdict the rule gives: ``True`` allows.
    allow: bool
    #: The path pattern as written.
    pattern: str
    #: ``"Allow"`` or ``"Disallow"``, as the line says. It differs from
    #: :attr:`allow` only for an empty ``Disallow:`` read with
    #: ``empty_rules="allow-all"``.
    directive: str

    @property
    def text(self) -> str:
        """The line, re-spelt: ``Disallow: /private``."""
        return f"{self.directive}: {self.pattern}"


# How an entry matches once its head is known to be a prefix of the path.
_PREFIX: Final = 0  # the whole pattern is the head: it matches
_EXACT: Final = 1  # "head$": the path must be exactly the head
# otherwise a _Wild: (middle literals, last literal, ends with "$")
_Wild = tuple[tuple[str, ...], str, bool]
_Entry = tuple[int, Rule, "int | _Wild"]

# Past this many distinct heads, one startswith(tuple) pre-check costs more
# than the length walk it would save.
_PRECHECK_MAX_HEADS: Final = 48
_NO_RANK: Final = -(1 << 62)


class CompiledRules:
    """Decides which rule of a (merged) group applies to a normalised path."""

    __slots__ = ("_buckets", "_levels", "_heads")

    def __init__(self, rules: Iterable[tuple[int, bool, str]], options: Options):
        first_match = options.precedence == "first"
        buckets: dict[str, list[_Entry]] = {}
        for line, allow, written in rules:
            directive = "Allow" if allow else "Disallow"
            patterns = _patterns_of(written, allow, options)
            if patterns and not patterns[0]:
                allow = True  # an empty rule read as "allow everything"
            rule = Rule(line, allow, written, directive)
            for pattern in patterns:
                head, how = _compile(pattern, options.wildcards)
                rank = -rule.line if first_match else 2 * len(pattern) + rule.allow
                buckets.setdefault(head, []).append((rank, rule, how))
        best_by_length: dict[int, int] = {}
        for head, entries in buckets.items():
            # Best rank first; among equals the earliest line, so explain() names it.
            entries.sort(key=lambda entry: (-entry[0], entry[1].line))
            length = len(head)
            best_by_length[length] = max(best_by_length.get(length, _NO_RANK), entries[0][0])
        # The walk goes from the longest head down; at each length, what is left
        # to find is among heads of that length or shorter, so each level
        # carries the best rank there.
        levels = []
        running = _NO_RANK
        for length in sorted(best_by_length):
            running = max(running, best_by_length[length])
            levels.append((length, running))
        levels.reverse()
        self._buckets = buckets
        self._levels = tuple(levels)
        heads = tuple(buckets)
        self._heads = heads if 0 < len(heads) <= _PRECHECK_MAX_HEADS and "" not in buckets else None

    def decide(self, path: str) -> Rule | None:
        """The rule that decides ``path``, or ``None`` if no rule matches."""
        heads = self._heads
        if heads is not None and not path.startswith(heads):
            return None
        size = len(path)
        buckets = self._buckets
        best: Rule | None = None
        best_rank = _NO_RANK
        for length, cap in self._levels:
            if cap <= best_rank:
                break
            if length > size:
                continue
            entries = buckets.get(path[:length])
            if entries is None:
                continue
            for rank, rule, how in entries:
                if rank <= best_rank:
                    break
                if how is _PREFIX or (how is _EXACT and size == length) or (how.__class__ is tuple and _wild_match(path, length, how)):  # type: ignore[arg-type]
                    best_rank = rank
                    best = rule
                    break
        return best

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._buckets.values())


def _patterns_of(written: str, allow: bool, options: Options) -> list[str]:
    """The normalised patterns a rule stands for: usually one, none if it is ignored."""
    pattern = normalize(written)
    if not pattern:
        if options.empty_rules == "allow-all":
            # The 1996/1997 reading: "Disallow:" (and "Allow:") allow every URL.
            return [""]
        return []
    if allow and options.wildcards:
        # Google: "Allow: /dir/index.html" (or .htm) also allows "/dir/".
        slash = pattern.rfind("/")
        if slash >= 0 and pattern.startswith("/index.htm", slash):
            return [pattern, pattern[: slash + 1] + "$"]
    return [pattern]


def _compile(pattern: str, wildcards: bool) -> tuple[str, int | _Wild]:
    if not wildcards:
        return pattern, _PREFIX
    star = pattern.find("*")
    if star < 0:
        if pattern.endswith("$"):
            return pattern[:-1], _EXACT
        return pattern, _PREFIX
    dollar = pattern.endswith("$")
    body = pattern[:-1] if dollar else pattern
    # Runs of "*" mean one "*"; empty literals between stars vanish.
    parts = body[star + 1 :].split("*")
    last = parts.pop()
    middle = tuple(part for part in parts if part)
    return pattern[:star], (middle, last, dollar)


def _wild_match(path: str, start: int, wild: _Wild) -> bool:
    # Leftmost placement of each literal leaves the most room for the rest, so
    # one forward pass decides: linear time, no backtracking.
    middle, last, dollar = wild
    position = start
    for part in middle:
        found = path.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    if dollar:
        return len(path) - len(last) >= position and path.endswith(last)
    return not last or path.find(last, position) >= 0
