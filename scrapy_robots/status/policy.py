"""StatusPolicy: a robots.txt response or a download failure becomes an action."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any


class Action(str, Enum):
    """What a robots.txt outcome means for the site's requests."""

    PARSE = "parse"  #: the body holds the rules
    ALLOW = "allow"  #: no rules: everything is allowed
    DENY = "deny"  #: everything is denied
    UNREACHABLE = "unreachable"  #: deny for now, fetch again later (RFC 9309 2.3.1.4)
    EXCLUDED = "excluded"  #: ROBOTSTXT_EXCLUDED_DOMAINS: never fetched (not a policy row)


#: The key for network errors and timeouts (no HTTP status at all).
NETWORK = "network"

_DEFAULT: dict[int | str, Action] = {
    "1xx": Action.UNREACHABLE,
    "2xx": Action.PARSE,
    # A 3xx reaching the policy is a redirect that was not followed (too many hops,
    # no Location): RFC 9309 2.3.1.2 lets crawlers treat it as "unavailable".
    "3xx": Action.ALLOW,
    "4xx": Action.ALLOW,
    401: Action.DENY,
    403: Action.DENY,
    429: Action.UNREACHABLE,
    "5xx": Action.UNREACHABLE,
    NETWORK: Action.UNREACHABLE,
}

PRESETS: dict[str, dict[int | str, Action]] = {
    # Our default: RFC 9309, except that 401/403 mean "keep out".
    "default": _DEFAULT,
    # RFC 9309 to the letter: 401 and 403 are "unavailable" like any other 4xx.
    "rfc9309": {**_DEFAULT, 401: Action.ALLOW, 403: Action.ALLOW},
    # Scrapy's historic behaviour: parse whatever body comes back, allow all on errors.
    "scrapy": {
        "1xx": Action.PARSE,
        "2xx": Action.PARSE,
        "3xx": Action.PARSE,
        "4xx": Action.PARSE,
        "5xx": Action.PARSE,
        NETWORK: Action.ALLOW,
    },
}


class StatusPolicy:
    """Maps an HTTP status, its class (``"4xx"``) or ``"network"`` to an :class:`Action`.

    Built from ``ROBOTSTXT_STATUS_POLICY``: a preset name (``"default"``,
    ``"rfc9309"``, ``"scrapy"``) or a dict of overrides on top of a preset (the
    dict's ``"preset"`` key, else ``"default"``).
    """

    def __init__(self, rules: Mapping[int | str, Action]):
        self.rules = dict(rules)

    @classmethod
    def from_setting(cls, value: Any) -> StatusPolicy:
        if value is None or value == "":
            value = "default"
        if isinstance(value, str):
            return cls(_preset(value))
        if not isinstance(value, Mapping):
            raise ValueError(
                f"ROBOTSTXT_STATUS_POLICY must be a preset name ({', '.join(PRESETS)}) "
                f"or a dict such as {{503: 'allow', '4xx': 'deny'}}, not {value!r}"
            )
        overrides = dict(value)
        rules = _preset(str(overrides.pop("preset", "default")))
        for key, action in overrides.items():
            rules[_key(key)] = _action(key, action)
        return cls(rules)

    def action_for_status(self, status: int) -> Action:
        rule = self.rules.get(status) or self.rules.get(f"{status // 100}xx")
        # A status outside every listed class (600+, say) is no usable answer.
        return rule or self.rules.get(NETWORK, Action.UNREACHABLE)

    def action_for_redirect_loop(self) -> Action:
        """Redirects beyond ``REDIRECT_MAX_TIMES``: the ``"3xx"`` row."""
        return self.rules.get("3xx") or self.action_for_failure()

    def action_for_failure(self) -> Action:
        return self.rules.get(NETWORK, Action.UNREACHABLE)


def _preset(name: str) -> dict[int | str, Action]:
    try:
        return dict(PRESETS[name])
    except KeyError:
        raise ValueError(f"ROBOTSTXT_STATUS_POLICY: unknown preset {name!r}; use one of {', '.join(PRESETS)}") from None


def _key(key: Any) -> int | str:
    if isinstance(key, int) and 100 <= key <= 599:
        return key
    text = str(key).strip().lower()
    if text.isdigit() and 100 <= int(text) <= 599:
        return int(text)
    if text == NETWORK or (len(text) == 3 and text[0] in "12345" and text[1:] == "xx"):
        return text
    raise ValueError(f'ROBOTSTXT_STATUS_POLICY: {key!r} is not a status code (404), a class ("4xx") or "network"')


def _action(key: Any, action: Any) -> Action:
    try:
        chosen = Action(str(action.value if isinstance(action, Action) else action).lower())
        if chosen is Action.EXCLUDED:
            raise ValueError
        return chosen
    except ValueError:
        raise ValueError(
            f"ROBOTSTXT_STATUS_POLICY[{key!r}]: {action!r} is not an action; use one of "
            f"{', '.join(a.value for a in Action if a is not Action.EXCLUDED)}"
        ) from None
