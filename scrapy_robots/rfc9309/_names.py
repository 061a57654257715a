"""How a name is read: a ``User-agent`` line's and a crawler's, by the same rules.

The rule-set builder keys each ``User-agent`` line with :func:`agent_key`; group
selection reads the crawler's name with :func:`token_of`. Both sides meet here, so
neither imports the other. ``product_tokens`` is :class:`Options`' choice of reading.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from scrapy_robots.useragent import product_token

if TYPE_CHECKING:
    from scrapy_robots.rfc9309._options import ProductTokens

GLOBAL: Final = "*"
# "names": a name is read up to its first character other than a letter, a digit, "-"
# or "_" ("Googlebot/2.1" names Googlebot), on both sides. Real crawler names carry
# digits (MJ12bot, Ai2Bot-Dolma, 360Spider): cut at the digit, "User-agent: Ai2Bot-Dolma"
# would name "ai", AI2Bot's name too, and one crawler would obey the other's group.
# Letters beyond ASCII are letters: "User-agent: UnicödeBöt" names UnicödeBöt, as
# Protego reads it (cut at the "ö", it would name "unic", whom no crawler is named after).
_NAME: Final = re.compile(r"[\w-]*")
# "rfc9309": the RFC's product token (ASCII letters, "-", "_"), Google's ExtractUserAgent.
_RFC9309_TOKEN: Final = re.compile(r"[A-Za-z_-]*")


def name_key(name: str) -> str:
    """The one reading of a name, on a ``User-agent`` line and in a crawler's name
    alike: its leading letters, digits, ``_`` and ``-``, lower-cased ("" if none)."""
    return _NAME.match(name).group().lower()  # type: ignore[union-attr]  # matches "" at worst


def agent_key(value: str, product_tokens: ProductTokens = "names") -> str:
    """The key a ``User-agent`` value is matched by: ``"*"`` or :func:`name_key`
    (under ``product_tokens="rfc9309"``, its leading ASCII letters, ``-`` and ``_``).

    Like Google, ``* anything`` still names every crawler.
    """
    if value[:1] == "*" and (len(value) == 1 or value[1] in " \t\v\f"):
        return GLOBAL
    if product_tokens == "names":
        return name_key(value)
    return _RFC9309_TOKEN.match(value).group().lower()  # type: ignore[union-attr]


def token_of(user_agent: str, product_tokens: ProductTokens = "names") -> str:
    """The key a crawler's name or ``User-Agent`` header selects groups by: its
    :func:`~scrapy_robots.useragent.product_token` read as the lines are."""
    tokens = _TOKENS[product_tokens]
    token = tokens.get(user_agent)
    if token is None:
        if len(tokens) > 1024:
            tokens.clear()
        name = product_token(user_agent)
        # Under "names", a crawler named "Ai2Bot-Dolma" obeys "User-agent: Ai2Bot-Dolma",
        # whose key is its name; a name with no letter or digit obeys "*". Under
        # "rfc9309", Google compares the crawler's whole name with the line's token: a
        # name with a digit or a non-ASCII letter equals no group's.
        token = tokens[user_agent] = (name_key(name) or GLOBAL) if product_tokens == "names" else name.lower()
    return token


# product_token() costs microseconds and crawlers ask as the same agent all the time.
_TOKENS: dict[str, dict[str, str]] = {"names": {}, "rfc9309": {}}
