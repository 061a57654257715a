"""The validators every ROBOTSTXT_* reader shares: a bad value fails at start-up with
the setting's name and what to give instead, never rounded or guessed. A setting left
unset is its default from the table (``defaults.py``); a default computed from other
settings is passed in (``default=``)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy_robots.settings.defaults import DEFAULTS, Computed

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: No ``default=`` given: the table's.
_TABLE: Any = object()


def _default(name: str, given: Any) -> Any:
    if given is not _TABLE:
        return given
    value = DEFAULTS[name]
    if isinstance(value, Computed):  # a bug of ours, not the user's
        raise TypeError(f"{name}'s default is computed ({value.docs}): pass it as default=")
    return value


def number(settings: BaseSettings, name: str, kind: type, minimum: float = 0, *, default: Any = _TABLE) -> Any:
    """A number; one that would change on the way in (a fraction where a whole number
    is needed, True for 1) is refused, never rounded."""
    raw = settings.get(name)
    if raw is None or raw == "":
        return _default(name, default)
    noun = "whole number" if kind is int else "number"
    if isinstance(raw, bool):
        raise ValueError(f"{name} must be a {noun}, not {raw!r}")
    try:
        number = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a {noun}, not {raw!r}") from None
    if not math.isfinite(number) or number < minimum:
        raise ValueError(f"{name} must be a finite {noun} >= {minimum:g}, not {raw!r}")
    if kind is int:
        if not number.is_integer():
            raise ValueError(f"{name} must be a whole number, not {raw!r}")
        return raw if isinstance(raw, int) else int(number)
    return number


def read_bool(settings: BaseSettings, name: str) -> bool:
    """True or False, as Scrapy's getbool reads them (True/False, 1/0, "true"/"false"),
    with the setting's name in the error; anything else (2, 0.5, "yes") is refused."""
    raw = settings.get(name)
    if raw is None or raw == "":
        return bool(_default(name, _TABLE))
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in ("1", "true", "0", "false"):
        return raw.strip().lower() in ("1", "true")
    raise ValueError(f"{name} must be True or False, not {raw!r}")


def choice(settings: BaseSettings, name: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``, in any case."""
    raw = settings.get(name)
    if raw is None or raw == "":
        return str(_default(name, _TABLE))
    value = raw.strip().lower() if isinstance(raw, str) else None
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {raw!r}")
    return value


def domains(settings: BaseSettings, name: str) -> tuple[str, ...]:
    """Domain names: a list, or a comma-separated string (``-s``). A URL, a path or a
    port would match no host: refused, with the domain to give instead."""
    raw = settings.get(name)
    if raw is None or raw == "":
        raw = _default(name, _TABLE)
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:  # -s 'NAME=["example.com"]', as Scrapy reads list settings given as JSON
            raw = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"{name} is not a valid JSON list ({exc}): {raw!r}") from None
    if isinstance(raw, str):
        values: list[Any] = raw.split(",")
    elif isinstance(raw, (list, tuple, set, frozenset)):
        values = list(raw)
    else:
        raise ValueError(f"{name} must be a list of domain names such as ['example.com', 'gov'], not {raw!r}")
    found = set()
    for value in values:
        if not isinstance(value, str):
            raise ValueError(f"{name}: {value!r} is not a domain name (a string such as 'example.com')")
        domain = value.strip().strip(".").lower()
        if not domain:
            continue
        if any(c in domain for c in "/:@*? \t"):
            # A URL, a host:port or a wildcard would never equal a host: say which domain.
            host = urlsplit(domain if "//" in domain else f"//{domain}").hostname or ""
            host = host.lstrip("*.") or "example.com"
            raise ValueError(
                f"{name}: {value!r} is not a domain name (did you mean {host!r}? A domain covers its subdomains)"
            )
        found.add(domain)
    return tuple(sorted(found))


def configured_user_agent(settings: Any) -> str | None:
    """``ROBOTSTXT_USER_AGENT``: obeyed whatever a request's own User-Agent; None unset."""
    return settings.get("ROBOTSTXT_USER_AGENT") or None


def default_user_agent(settings: Any) -> str:
    """The agent a crawl obeys robots.txt as: ``ROBOTSTXT_USER_AGENT``, else
    ``USER_AGENT``, else ``*``. ``settings``: Scrapy's, or any mapping."""
    return settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT") or "*"


def object_name(value: Any) -> str:
    """How an error names the object a setting holds."""
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)
