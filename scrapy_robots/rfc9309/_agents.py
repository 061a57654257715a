"""Which groups a crawler obeys: the groups that name it, else the ``*`` groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots.rfc9309._names import GLOBAL, token_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots.rfc9309._groups import Group
    from scrapy_robots.rfc9309._options import AgentMatching, ProductTokens


def index_groups(groups: Sequence[Group]) -> dict[str, tuple[Group, ...]]:
    """Groups by the keys of their ``User-agent`` lines, each list in file order."""
    index: dict[str, list[Group]] = {}
    for group in groups:
        for _, _, key in group.agents:
            named = index.setdefault(key, [])
            if not named or named[-1] is not group:
                named.append(group)
    return {key: tuple(named) for key, named in index.items()}


def select_groups(
    index: dict[str, tuple[Group, ...]],
    user_agent: str,
    matching: AgentMatching,
    product_tokens: ProductTokens = "names",
) -> tuple[Group, ...]:
    """The groups whose rules apply to ``user_agent``, in file order, to be merged.

    Groups that name the crawler win; otherwise the ``*`` groups; otherwise none.
    ``user_agent`` may be a product token or a full ``User-Agent`` header; the
    index's keys are read with the same ``product_tokens``.
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
        token = token_of(user_agent, product_tokens)
        specific = () if token == GLOBAL else index.get(token, ())
    return specific or index.get(GLOBAL, ())


def scan_groups(groups: Sequence[Group], user_agent: str, product_tokens: ProductTokens = "names") -> tuple[Group, ...]:
    """:func:`select_groups` under ``"token"`` matching, by one scan of the groups.

    A crawler asks as one or two agents: a scan allocates nothing but the
    answer, where an index allocates a tuple for every token in the file
    (tens, in files that list bots one by one).
    """
    token = token_of(user_agent, product_tokens)
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
