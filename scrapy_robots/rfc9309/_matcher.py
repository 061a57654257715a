"""A group's rules compiled once into a structure that decides a path quickly.

Most rules are plain prefixes (no ``*``, no final ``$``). Their patterns are
kept sorted; the longest one that is a prefix of a path is found by one
bisection and a short walk up the "is a prefix of" chain (the largest pattern
sorted before the path either is a prefix of it, or shares with it a prefix
that holds every pattern that is). That is O(log n) whatever the number of
rules, a 20,000-rule file included, with no regex and no scan.

The other rules (wildcards, ``$`` anchors, empty rules read as "allow all")
are filed under their *head*, the literal text before the first wildcard: a
rule can only match a path that starts with its head. Heads are kept sorted
and linked the same way, so a decision visits only the buckets whose head is
a prefix of the path, longest first.

Each rule gets a *rank*, an integer where larger wins, which folds the
precedence option into one comparison:

- longest match: ``2 * priority + allow`` (priority is the length of the
  normalised pattern, RFC 9309; ``Allow`` wins ties);
- first match: ``-line``.

The walks stop as soon as nothing left can beat the best rank found.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import compress
from typing import TYPE_CHECKING, Final, NamedTuple

from scrapy_robots.rfc9309._url import normalize

if TYPE_CHECKING:
    from collections.abc import Sequence

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


# How an entry matches once its head is known to be a prefix of the path; the
# literal text an entry needs for that is kept beside it, in the entry itself
# (no tuple of its own: a big file has tens of thousands of wildcard rules, and
# every object that outlives a call is one more for the garbage collector).
_PREFIX: Final = 0  # the whole pattern is the head: it matches
_EXACT: Final = 1  # "head$": the path must be exactly the head
_CONTAINS: Final = 2  # "head*last": the path holds "last" after the head
_ENDS: Final = 3  # "head*last$": the path ends with "last", after the head
_WILD: Final = 4  # anything else: a _Wild
#: (middle literals, last literal, ends with "$")
_Wild = tuple[tuple[str, ...], str, bool]
#: ``(line, allow, pattern as written)``, as the group builder records a rule.
RawRule = tuple[int, bool, str]
#: ``(rank, verdict, raw rule, how it matches, what it needs: None, a literal or a _Wild)``
Entry = tuple[int, bool, "RawRule | None", int, "str | _Wild | None"]

_NO_RANK: Final = -(1 << 62)
# Stand-ins for a pattern's literal "*" and "$" while its rules are filed.
_STAR: Final = "\ue02a"
_DOLLAR: Final = "\ue024"
# Below this many entries a bucket is scanned as it is: the screen costs two
# iterator objects, more than a few direct tests.
_SCREEN_MIN: Final = 6


class CompiledRules:
    """Decides which rule of a (merged) group applies to a normalised path."""

    __slots__ = (
        "_heads",
        "_allow",
        "_raws",
        "_parents",
        "_chain_best",
        "_special_heads",
        "_special_parents",
        "_buckets",
        "_literals",
        "_caps",
        "_special_cap",
    )
    _heads: tuple[str, ...]
    _parents: Sequence[int] | None
    _special_heads: Sequence[str]
    _special_parents: Sequence[int]
    _buckets: Sequence[Sequence[Entry]]
    _literals: Sequence[tuple[str, ...] | None]
    _caps: Sequence[int]

    def __init__(self, rules: Sequence[RawRule], options: Options, lines: bool = True):
        # lines=False keeps verdicts only (decide()'s entries hold no raw rule): _agent.py.
        # Compiled on the first question, so that cost counts. Work on all patterns at once
        # where Python does it in C (a join, a dict built from two iterators, a sort) and
        # loop in Python only over the rules that need it: wildcards, duplicates, empty rules.
        first_match = options.precedence == "first"
        wildcards = options.wildcards
        patterns = [raw[2] for raw in rules]
        # "\n" cannot occur in a pattern, so no test below matches across two.
        blob = "\n".join(patterns)
        if "%" in blob or not blob.isascii():
            patterns = [normalize(pattern) for pattern in patterns]
            blob = "\n".join(patterns)
        # "%2A" and "%24" are a literal "*" and "$", which URLs are compared with
        # decoded (RFC 9309 2.2.3). With wildcards on, they stand in as characters
        # that no normalised text holds until the rules are filed, so that neither
        # reads as a wildcard or an anchor; each is one character, as in the URL,
        # so ranks do not change when the stand-ins go.
        stand_ins = False
        if "%2A" in blob or "%24" in blob:
            stand_ins = wildcards
            star, dollar = (_STAR, _DOLLAR) if wildcards else ("*", "$")
            patterns = [pattern.replace("%2A", star).replace("%24", dollar) for pattern in patterns]
        # Every pattern, keyed by its normalised text, with the one line that
        # speaks for it: of a pattern written twice, the earlier line (the dict
        # is built from the end), except that under longest match an Allow wins
        # (fixed below). The other lines can never decide: same paths, no better rank.
        plain: dict[str, RawRule] = dict(zip(reversed(patterns), reversed(rules)))
        duplicates = len(plain) < len(patterns)
        buckets: dict[str, list[Entry]] = {}
        if "" in plain:
            del plain[""]
            if options.empty_rules == "allow-all":
                # The 1996/1997 reading: an empty rule allows everything.
                empty = buckets.setdefault("", [])
                for pattern, raw in zip(patterns, rules):
                    if not pattern:
                        empty.append((-raw[0] if first_match else 1, True, raw if lines else None, _PREFIX, None))
        if duplicates and not first_match:
            for pattern, raw in zip(patterns, rules):
                if raw[1]:
                    old = plain.get(pattern)
                    if old is not None and not old[1]:
                        plain[pattern] = raw
        if wildcards and ("*" in blob or "$" in blob):
            # Wildcard and "$" patterns leave the plain ones for their buckets.
            for pattern in [key for key in plain if "*" in key or key[-1] == "$"]:
                raw = plain.pop(pattern)
                head, how, needs = _compile(pattern)
                rank = -raw[0] if first_match else 2 * len(pattern) + raw[1]
                buckets.setdefault(head, []).append((rank, raw[1], raw if lines else None, how, needs))
        if wildcards and "/index.htm" in blob:
            for pattern, raw in zip(patterns, rules):
                if raw[1] and "/index.htm" in pattern:
                    # Google: "Allow: /dir/index.html" (or .htm) also allows "/dir/".
                    slash = pattern.rfind("/")
                    if pattern.startswith("/index.htm", slash):
                        derived = pattern[: slash + 1] + "$"
                        head, how, needs = _compile(derived)
                        rank = -raw[0] if first_match else 2 * len(derived) + 1
                        buckets.setdefault(head, []).append((rank, True, raw if lines else None, how, needs))
        if stand_ins:
            plain = {_literal(pattern): raw for pattern, raw in plain.items()}
            buckets = {
                _literal(head): [(*entry[:4], _literal_needs(entry[4])) for entry in entries]
                for head, entries in buckets.items()
            }
        self._compile_plain(plain, first_match, lines)
        self._compile_special(buckets)

    def _compile_plain(self, plain: dict[str, RawRule], first_match: bool, lines: bool) -> None:
        # Tuples and bytes, not lists: no slot over-allocated for as long as the rules live.
        self._heads = heads = tuple(sorted(plain))
        self._allow = bytes([plain[head][1] for head in heads])
        self._raws = tuple([plain[head] for head in heads]) if lines else None
        self._parents = None
        # Under longest match the longest matching prefix wins outright; under
        # first match an ancestor (a shorter prefix) may come earlier in the file,
        # so each pattern needs the best rank along its chain.
        self._chain_best: list[Entry] | None = None
        if first_match:
            parents = self._link()
            chain_best: list[Entry] = []
            for index, head in enumerate(heads):
                raw = plain[head]
                parent = parents[index] - 1
                if parent >= 0 and chain_best[parent][0] > -raw[0]:
                    chain_best.append(chain_best[parent])
                else:
                    chain_best.append((-raw[0], raw[1], raw if lines else None, _PREFIX, None))
            self._chain_best = chain_best

    def _link(self) -> Sequence[int]:
        """For each pattern, the index of its longest proper prefix among the patterns, or -1
        (stored + 1: see _compact).

        Built on the first path that needs it: many compiled groups never do.
        """
        self._parents = parents = _compact(_parents_of(self._heads))
        return parents

    def _compile_special(self, buckets: dict[str, list[Entry]]) -> None:
        if not buckets:  # plain prefixes only (most files): no lists to keep
            self._special_heads = self._special_parents = self._buckets = self._literals = self._caps = ()
            self._special_cap = _NO_RANK
            return
        heads = sorted(buckets)
        parents = _parents_of(heads)
        indexed: list[list[Entry]] = []
        screens: list[tuple[str, ...] | None] = []
        # For each head, the best rank in its bucket and its parents' buckets:
        # the walk up the chain stops as soon as that cannot beat the best found.
        caps: list[int] = []
        for head, parent in zip(heads, parents):
            entries = buckets[head]
            if len(entries) > 1:
                # Best rank first; among equals the earliest line, so explain() names it.
                entries.sort(key=_entry_order)
            # Real files put hundreds of wildcard rules under one head ("/*?sort=",
            # "/*utm_source=" ...). Every literal of a pattern must occur in a
            # path it matches, so the longest one is a test that C can run over
            # the whole bucket (map + compress) before Python looks at an entry.
            screens.append(tuple(map(_required, entries)) if len(entries) >= _SCREEN_MIN else None)
            indexed.append(entries)
            caps.append(max(entries[0][0], caps[parent]) if parent >= 0 else entries[0][0])
        self._special_heads = tuple(heads)
        self._special_parents = _compact(parents)
        self._buckets = tuple(map(tuple, indexed))
        self._literals = tuple(screens)
        self._caps = array("q", caps)
        self._special_cap = max(caps, default=_NO_RANK)

    def allows(self, path: str) -> bool:
        """Whether ``path`` is allowed: :meth:`decide` reduced to its verdict."""
        if self._chain_best is not None:
            entry = self.decide(path)
            return entry is None or entry[1]
        # Longest match (the default): the longest plain prefix decides unless a
        # special rule beats its rank, and only the verdict is asked for, so no
        # entry is built. The prefix walk is decide()'s, inlined on purpose: this
        # is the hot path, and a method call would cost more than it does.
        heads = self._heads
        index = bisect_right(heads, path) - 1
        if index >= 0 and not path.startswith(heads[index]):
            parents = self._parents if self._parents is not None else self._link()
            index = parents[index] - 1
            while index >= 0 and not path.startswith(heads[index]):
                index = parents[index] - 1
        if index < 0:
            if self._special_cap == _NO_RANK:
                return True
            entry = self._best_special(path, _NO_RANK)
            return entry is None or entry[1]
        allow = self._allow[index]
        rank = 2 * len(heads[index]) + allow
        # Most files have no special rule: their cap is _NO_RANK, below any rank.
        if self._special_cap <= rank:
            return allow == 1
        entry = self._best_special(path, rank)
        return allow == 1 if entry is None else entry[1]

    def decide(self, path: str) -> Entry | None:
        """The entry of the rule that decides ``path``, or ``None`` if no rule matches."""
        best: Entry | None = None
        best_rank = _NO_RANK
        heads = self._heads
        if heads:
            index = bisect_right(heads, path) - 1
            if index >= 0 and not path.startswith(heads[index]):
                parents = self._parents if self._parents is not None else self._link()
                index = parents[index] - 1
                while index >= 0 and not path.startswith(heads[index]):
                    index = parents[index] - 1
            if index >= 0:
                if self._chain_best is None:
                    allow = self._allow[index] == 1
                    best_rank = 2 * len(heads[index]) + allow
                    best = (best_rank, allow, None if self._raws is None else self._raws[index], _PREFIX, None)
                else:
                    best = self._chain_best[index]
                    best_rank = best[0]
        if self._special_cap <= best_rank:
            return best
        return self._best_special(path, best_rank) or best

    def _best_special(self, path: str, best_rank: int) -> Entry | None:
        """The special entry that matches ``path`` with the best rank above ``best_rank``, if any."""
        special_heads = self._special_heads
        special_parents = self._special_parents
        caps = self._caps
        index = bisect_right(special_heads, path) - 1
        while index >= 0 and not path.startswith(special_heads[index]):
            index = special_parents[index] - 1
        best = None
        # From here on every head up the chain is a prefix of the path.
        while index >= 0 and caps[index] > best_rank:
            entries = self._buckets[index]
            literals = self._literals[index]
            length = len(special_heads[index])
            index = special_parents[index] - 1
            if literals is not None:
                # Only the entries whose longest literal occurs in the path, still in rank order.
                entries = compress(entries, map(path.__contains__, literals))  # type: ignore[assignment]
            for entry in entries:
                if entry[0] <= best_rank:
                    break
                # The tests in the order of how often real files need them.
                how = entry[3]
                if how == _CONTAINS:
                    matched = path.find(entry[4], length) >= 0  # type: ignore[arg-type]
                elif how == _WILD:
                    matched = _wild_match(path, length, entry[4])  # type: ignore[arg-type]
                elif how == _ENDS:
                    matched = len(path) - len(entry[4]) >= length and path.endswith(entry[4])  # type: ignore[arg-type]
                elif how == _EXACT:
                    matched = len(path) == length
                else:
                    matched = True
                if matched:
                    best_rank = entry[0]
                    best = entry
                    break
        return best

    def __len__(self) -> int:
        return len(self._heads) + sum(map(len, self._buckets))


def rule_of(entry: Entry) -> Rule:
    """The public :class:`Rule` for a decided entry."""
    assert entry[2] is not None, "a verdict-only build keeps no rule"
    line, allow, pattern = entry[2]
    return Rule(line, entry[1], pattern, "Allow" if allow else "Disallow")


def _compact(indexes: list[int]) -> Sequence[int]:
    """Parent indexes (-1 for none) stored + 1, in as few bytes as they fit: one each
    below 255, else four. Read them as ``parents[i] - 1``."""
    shifted = [index + 1 for index in indexes]
    return bytes(shifted) if len(indexes) < 255 else array("i", shifted)


def _parents_of(heads: Sequence[str]) -> list[int]:
    """For each of the sorted ``heads``, the index of its longest proper prefix among them, or -1."""
    parents: list[int] = []
    # Sorted order visits a head's prefixes before it (a trie's DFS order): the
    # previous head and its chain of parents are the only candidates, and a
    # head skipped here is never a candidate again.
    top = -1
    for head in heads:
        while top >= 0 and not head.startswith(heads[top]):
            top = parents[top]
        parents.append(top)
        top = len(parents) - 1
    return parents


def _required(entry: Entry) -> str:
    """A literal that any path the entry matches contains ("" when there is none)."""
    how, needs = entry[3], entry[4]
    if how == _CONTAINS or how == _ENDS:
        return needs  # type: ignore[return-value]
    if how == _WILD:
        middle, last, _ = needs  # type: ignore[misc, str-unpack]
        return max((*middle, last), key=len)
    return ""


def _literal(text: str) -> str:
    return text.replace(_STAR, "*").replace(_DOLLAR, "$")


def _literal_needs(needs: str | _Wild | None) -> str | _Wild | None:
    if needs is None:
        return None
    if isinstance(needs, str):
        return _literal(needs)
    middle, last, dollar = needs
    return tuple(map(_literal, middle)), _literal(last), dollar


def _entry_order(entry: Entry) -> tuple[int, int]:
    # Without lines (a verdict-only build), equal ranks give equal verdicts: any order.
    return (-entry[0], 0 if entry[2] is None else entry[2][0])


def _compile(pattern: str) -> tuple[str, int, str | _Wild | None]:
    """``(head, how, needs)`` of a wildcard or ``$`` pattern."""
    star = pattern.find("*")
    if star < 0:
        if pattern[-1:] == "$":
            return pattern[:-1], _EXACT, None
        return pattern, _PREFIX, None
    dollar = pattern[-1] == "$"
    body = pattern[star + 1 : -1] if dollar else pattern[star + 1 :]
    if "*" not in body:  # one "*": the common shapes
        return pattern[:star], _ENDS if dollar else _CONTAINS, body
    # Runs of "*" mean one "*"; empty literals between stars vanish.
    parts = body.split("*")
    last = parts.pop()
    middle = tuple(filter(None, parts))
    if not middle:
        return pattern[:star], _ENDS if dollar else _CONTAINS, last
    return pattern[:star], _WILD, (middle, last, dollar)


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
