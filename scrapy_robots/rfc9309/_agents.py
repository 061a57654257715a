"""Which groups a crawler obeys: product tokens, the ``*`` fallback, merging."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from scrapy_robots.useragent import product_token

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots.rfc9309._groups import Group
    from scrapy_robots.rfc9309._options import AgentMatching

GLOBAL: Final = "*"
# RFC 9309 product tokens are letters, "-" and "_"; like Google, a name is read up to
# the first other character ("Googlebot/2.1" names Googlebot). Letters beyond ASCII are
# letters: "User-agent: UnicödeBöt" names the crawler UnicödeBöt, as Protego reads it.
# Cut at the "ö" (Google's ASCII class), the line would name "unic", a group no crawler
# is named after, and UnicödeBöt would obey "*".
_TOKEN: Final = re.compile(r"(?:[^\W\d]|-)*")
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")


def name_key(name: str) -> str:
    """The one reading of a name, on a ``User-agent`` line and in a crawler's name
    alike: its leading letters, ``_`` and ``-``, lower-cased ("" if none)."""
    return _TOKEN.match(name).group().lower()  # type: ignore[union-attr]  # matches "" at worst


def agent_key(value: str) -> str:
    """The key a ``User-agent`` value is matched by: ``"*"`` or :func:`name_key`.

    Like Google, ``* anything`` still names every crawler.
    """
    if value[:1] == "*" and (len(value) == 1 or value[1] in " \t\v\f"):
        return GLOBAL
    return name_key(value)


def index_groups(groups: Sequence[Group]) -> dict[str, tuple[Group, ...]]:
    """Groups by the keys of their ``User-agent`` lines, each list in file order."""
    index: dict[str, list[Group]] = {}
    for group in groups:
        for _, _, key in group.agents:
            named = index.setdefault(key, [])
            if not named or named[-1] is not group:
                named.append(group)
    return {key: tuple(named) for key, named in index.items()}


def select_groups(index: dict[str, tuple[Group, ...]], user_agent: str, matching: AgentMatching) -> tuple[Group, ...]:
    """The groups whose rules apply to ``user_agent``, in file order, to be merged.

    Groups that name the crawler win; otherwise the ``*`` groups; otherwise none.
    ``user_agent`` may be a product token or a full ``User-Agent`` header.
    """
    if matching == "substring":
        haystack = user_agent.lower()
        named = {
            id(group): group
            for key, groups in index.items()
            if key not in ("", GLOBAL) and key in haystack
            for group in groups
        }
        specific = tuple(sorted(named.values(), key=lambda group: group.agents[0][0]))
    else:
        token = token_of(user_agent)
        specific = () if token == GLOBAL else index.get(token, ())
    return specific or index.get(GLOBAL, ())


def scan_groups(groups: Sequence[Group], user_agent: str) -> tuple[Group, ...]:
    """:func:`select_groups` under ``"token"`` matching, by one scan of the groups.

    A crawler asks as one or two agents: a scan allocates nothing but the
    answer, where an index allocates a tuple for every token in the file
    (tens, in files that list bots one by one).
    """
    token = token_of(user_agent)
    named: list[Group] = []
    everyone: list[Group] = []
    for group in groups:
        for agent in group.agents:
            key = agent[2]
            if key == token:
                named.append(group)
                break
            if key == GLOBAL and (not everyone or everyone[-1] is not group):
                everyone.append(group)
    return tuple(named or everyone)


def token_of(user_agent: str) -> str:
    """The lower-cased product token of a crawler's name or ``User-Agent`` header."""
    token = _TOKENS.get(user_agent)
    if token is None:
        if len(_TOKENS) > 1024:
            _TOKENS.clear()
        # The same reading as the lines' (agent_key): a crawler named "FooBot2" obeys
        # "User-agent: FooBot2", which names "foobot". A name with no letters obeys "*".
        token = _TOKENS[user_agent] = name_key(crawler_name(user_agent)) or GLOBAL
    return token


def crawler_name(user_agent: str) -> str:
    """The product token of a crawler's name or ``User-Agent`` header, as written.

    :func:`~scrapy_robots.useragent.product_token`, except that a non-ASCII
    letter is part of the name: ``Bö`` stays ``Bö``.
    """
    if user_agent.isascii():
        return product_token(user_agent)
    # product_token() reads ASCII names and would cut "Bö" to "B", which would then
    # obey "User-agent: Bär" (read as "B", as Google reads it). Google compares the
    # crawler's whole name, and a name with a non-ASCII letter equals no group's
    # key (keys are ASCII): read the name with an ASCII letter standing in for
    # each non-ASCII character, then take the same span of the real name.
    stand_in = _NON_ASCII.sub("x", user_agent)
    token = product_token(stand_in)
    start = stand_in.find(token)
    return user_agent[start : start + len(token)] if start >= 0 else token


# product_token() costs microseconds and crawlers ask as the same agent all the time.
_TOKENS: dict[str, str] = {}
