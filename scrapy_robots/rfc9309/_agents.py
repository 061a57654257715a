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
# RFC 9309 product tokens are letters, "-" and "_"; like Google, a User-agent
# line is read up to the first other character ("Googlebot/2.1" names Googlebot).
_TOKEN: Final = re.compile(r"[A-Za-z_-]*")


def agent_key(value: str) -> str:
    """The key a ``User-agent`` value is matched by: ``"*"`` or a lower-cased token.

    Like Google, ``* anything`` still names every crawler.
    """
    if value[:1] == "*" and (len(value) == 1 or value[1] in " \t\v\f"):
        return GLOBAL
    return _TOKEN.match(value).group().lower()  # type: ignore[union-attr]  # matches "" at worst


def select_groups(groups: Sequence[Group], user_agent: str, matching: AgentMatching) -> tuple[Group, ...]:
    """The groups whose rules apply to ``user_agent``, in file order, to be merged.

    Groups that name the crawler win; otherwise the ``*`` groups; otherwise none.
    ``user_agent`` may be a product token or a full ``User-Agent`` header.
    """
    if matching == "substring":
        haystack = user_agent.lower()
        specific = tuple(
            group for group in groups if any(key not in ("", GLOBAL) and key in haystack for _, _, key in group.agents)
        )
    else:
        token = product_token(user_agent).lower()
        if token == GLOBAL:
            specific = ()
        else:
            specific = tuple(group for group in groups if any(key == token for _, _, key in group.agents))
    if specific:
        return specific
    return tuple(group for group in groups if any(key == GLOBAL for _, _, key in group.agents))
