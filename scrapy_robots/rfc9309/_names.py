"""How a name is read: a ``User-agent`` line's and a crawler's, by the same rules.

The rule-set builder keys each ``User-agent`` line with :func:`agent_key`; group
selection reads the crawler's name with :func:`token_of`. Both sides meet here, so
neither imports the other.
"""

from __future__ import annotations

import re
from typing import Final

from scrapy_robots.useragent import product_token

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
