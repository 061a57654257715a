"""TDMRep on the response itself: the ``tdm-reservation`` and ``tdm-policy`` header
fields, and the same names as ``<meta>`` tags in an HTML head.

Several values of one name (two header lines, a comma list, two tags) are read as one
list; members that are neither ``0`` nor ``1`` are ignored (the report: "Other values
are considered protocol errors ... unset"); when the members left disagree, ``1`` wins,
the most restrictive, as this package does wherever sources conflict (a "no" beats a
"yes" in Content-Usage, the directives add up). Of several ``tdm-policy`` values the
first is kept (a URL may hold a comma, so the value is never split).
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Any, Final

from scrapy_robots.tdmrep.answer import HEADER, META, UNSET, Answer
from scrapy_robots.utils.headers import header_values
from scrapy_robots.utils.html_head import head_meta_tags, meta_name

RESERVATION: Final = "tdm-reservation"
POLICY: Final = "tdm-policy"
_VALUES: Final = {"0": False, "1": True}


def header_reservation(headers: Any) -> Answer:
    """What the response's ``tdm-reservation`` and ``tdm-policy`` header fields say.

    ``headers``: Scrapy's ``Headers`` (anything with ``getlist(name)``), or a mapping of
    field names (any case) to a value or a list of values, ``str`` or ``bytes``.
    """
    reservations = header_values(headers, RESERVATION)
    policies = header_values(headers, POLICY)
    members = [member for value in reservations for member in value.split(",")]
    return _answer(members, policies, HEADER, "header {name}: {value}")


def meta_reservation(body_head: bytes) -> Answer:
    """What ``<meta name="tdm-reservation" content="1">`` and ``<meta name="tdm-policy"
    content="...">`` say, read from the document's first bytes (at most
    :data:`~scrapy_robots.utils.html_head.HEAD_BYTES`, up to ``</head>``; comments and scripts
    skipped). Names in any case; a tag without ``content`` is ignored, and said."""
    reservations: list[str] = []
    policies: list[str] = []
    problems: list[str] = []
    for attributes in head_meta_tags(body_head):
        name = meta_name(attributes)
        if name not in (RESERVATION, POLICY):
            continue
        if b"content" not in attributes:
            problems.append(f'<meta name="{name}"> without content: ignored')
            continue
        content = html.unescape(attributes[b"content"].decode("utf-8", "replace"))
        (reservations if name == RESERVATION else policies).append(content)
    answer = _answer(reservations, policies, META, '<meta name="{name}" content="{value}">')
    if problems:
        answer = replace(answer, problems=(*problems, *answer.problems))
    return answer


def _answer(reservations: list[str], policies: list[str], source: str, spelling: str) -> Answer:
    problems: list[str] = []
    stated: dict[bool, str] = {}
    for member in reservations:
        value = member.strip()
        if value in _VALUES:
            stated.setdefault(_VALUES[value], value)
        else:
            text = spelling.format(name=RESERVATION, value=value)
            problems.append(f"{text}: neither 0 nor 1, read as unset")
    policy = next((value.strip() for value in policies if value.strip()), None)
    if len({value.strip() for value in policies if value.strip()}) > 1:
        problems.append(f"several {POLICY} values: the first, {policy}, is kept")
    if not stated and policy is None:
        return Answer(problems=tuple(problems)) if problems else UNSET
    reserved = True if True in stated else (False if stated else None)
    if len(stated) > 1:
        problems.append(f"{RESERVATION} says both 0 and 1: 1 (reserved) is kept")
    reason = spelling.format(name=RESERVATION, value=stated[reserved]) if reserved is not None else UNSET.reason
    return Answer(
        reserved=reserved,
        policy=policy,
        source=source if reserved is not None else None,
        reason=reason,
        policy_source=source if policy is not None else None,
        policy_reason=spelling.format(name=POLICY, value=policy) if policy is not None else None,
        problems=tuple(problems),
    )
