"""RFC 9421's signature base for the components Web Bot Auth signs, and the structured
field values (RFC 9651) of its headers. Pure string functions: no key, no Scrapy.

The components a request is signed over are derived from its URL and method (section
2.2); ``"signature-agent";key="<member>"`` is the serialized member of the
``Signature-Agent`` dictionary the request carries (section 2.1.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from urllib.parse import ParseResult, SplitResult

#: The ports a URL's authority drops (RFC 9110 section 4.2.3, by way of RFC 9421 2.2.3).
DEFAULT_PORTS: Final = {"http": 80, "https": 443}
#: The ``tag`` of a Web Bot Auth request signature.
TAG: Final = "web-bot-auth"


def sf_string(value: str) -> str:
    """An RFC 9651 String (section 4.1.6): quoted, ``\\`` and ``"`` escaped. The caller
    gives printable ASCII (the settings check the agent's URL)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def authority(url: SplitResult | ParseResult) -> str:
    """``@authority``: the host lowercased, its port unless it is the scheme's default."""
    host = url.hostname or ""
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    port = url.port
    if port is None or port == DEFAULT_PORTS.get(url.scheme):
        return host
    return f"{host}:{port}"


def _target_uri(url: SplitResult) -> str:
    # The target URI has no fragment: it is never sent.
    return url._replace(fragment="").geturl()


#: Derived component -> its value for a request (method, split URL). RFC 9421 section 2.2.
DERIVED: Final[dict[str, Callable[[str, SplitResult], str]]] = {
    "@method": lambda method, url: method,
    "@authority": lambda method, url: authority(url),
    "@path": lambda method, url: url.path or "/",
    "@query": lambda method, url: "?" + url.query,
    "@target-uri": lambda method, url: _target_uri(url),
    "@scheme": lambda method, url: url.scheme.lower(),
}


def inner_list(components: Iterable[str], agent_member: str | None) -> str:
    """The covered components as the ``Signature-Input`` inner list writes them."""
    covered = [sf_string(name) for name in components]
    if agent_member is not None:
        covered.append(f'"signature-agent";key={sf_string(agent_member)}')
    return "(" + " ".join(covered) + ")"


def signature_params(inner: str, params: Iterable[tuple[str, str | int]]) -> str:
    """``@signature-params``: the inner list and its parameters, in the given order."""
    return inner + "".join(
        f";{name}={value}" if isinstance(value, int) else f";{name}={sf_string(value)}" for name, value in params
    )


def signature_base(lines: Iterable[tuple[str, str]], params: str) -> str:
    """The signature base (RFC 9421 section 2.5): one ``"<component id>": <value>``
    line per covered component, then ``"@signature-params"``; no final newline."""
    return "".join(f"{name}: {value}\n" for name, value in lines) + f'"@signature-params": {params}'
