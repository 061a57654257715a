"""The choices where robots.txt conventions conflict, validated once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Precedence = Literal["longest", "first"]
EmptyRules = Literal["ignore", "allow-all"]
AgentMatching = Literal["token", "substring"]
ProductTokens = Literal["names", "rfc9309"]

PRECEDENCES: Final = ("longest", "first")
EMPTY_RULES: Final = ("ignore", "allow-all")
AGENT_MATCHINGS: Final = ("token", "substring")
PRODUCT_TOKENS: Final = ("names", "rfc9309")


@dataclass(frozen=True)
class Options:
    """How a :class:`RobotsTxt` reads its file. The defaults are RFC 9309's (and Google's),
    but for ``product_tokens``, where site owners name crawlers whose names have digits.

    ``precedence``
        ``"longest"``: the matching rule with the longest path wins, ``Allow``
        on a tie (RFC 9309). ``"first"``: the first matching rule in file
        order wins (the 1997 draft, ``urllib.robotparser``).
    ``wildcards``
        ``True``: ``*`` matches any characters and a final ``$`` anchors the
        end (RFC 9309). ``False``: both are ordinary characters (1994/1996).
    ``empty_rules``
        ``"ignore"``: ``Disallow:`` and ``Allow:`` with no path have no
        effect (RFC 9309, Google). ``"allow-all"``: they are rules that match
        every URL and allow it (the 1996/1997 drafts, ``urllib.robotparser``);
        this decides under ``"first"`` precedence, where such a line stops the
        rules after it.
    ``agent_matching``
        ``"token"``: a group applies when its product token equals the
        crawler's, case-insensitively (RFC 9309). ``"substring"``: when its
        name appears anywhere in the crawler's full ``User-Agent`` string
        (the 1996 draft, robotexclusionrulesparser).
    ``product_tokens``
        ``"names"``: a name is its letters (of any script), digits, ``-`` and ``_``,
        on a ``User-agent`` line and in the crawler's name alike: ``User-agent:
        Ai2Bot-Dolma`` names Ai2Bot-Dolma and no other crawler (as Protego reads
        it). ``"rfc9309"``: RFC 9309's product token, read as Google reads it: a
        line up to its first character other than an ASCII letter, ``-`` or
        ``_`` (``Ai2Bot-Dolma`` names ``ai``), and the crawler's name whole (so
        Ai2Bot-Dolma obeys ``*``); Google's verdicts, for those who compare.
    """

    precedence: Precedence = "longest"
    wildcards: bool = True
    empty_rules: EmptyRules = "ignore"
    agent_matching: AgentMatching = "token"
    product_tokens: ProductTokens = "names"

    def __post_init__(self) -> None:
        _check("precedence", self.precedence, PRECEDENCES)
        _check("empty_rules", self.empty_rules, EMPTY_RULES)
        _check("agent_matching", self.agent_matching, AGENT_MATCHINGS)
        _check("product_tokens", self.product_tokens, PRODUCT_TOKENS)
        if not isinstance(self.wildcards, bool):
            raise ValueError(f"wildcards must be True or False, not {self.wildcards!r}")


def _check(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        expected = " or ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name} must be {expected}, not {value!r}")


DEFAULT_OPTIONS: Final = Options()
