"""What a site's ``tdmrep.json`` says of a URL, and how that answer travels with a request.

Pure functions of a fetched entry (:class:`~scrapy_robots.cache.RobotsEntry`, whose rules
are the parsed :class:`~scrapy_robots.tdmrep.TdmRepFile`): the crawl's verdict, ``scrapy
robots`` and the compliance record read the file through them, and the spider middleware
combines the answer carried in ``request.meta`` with the response's header fields and meta
tags. Fetching and parsing the file is the book's, with :mod:`scrapy_robots.tdmrep.crawl`'s handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from scrapy_robots.status.policy import Action
from scrapy_robots.tdmrep.answer import FILE, HEADER, META, Answer
from scrapy_robots.usage import ALLOW, DENY, Preference

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from scrapy_robots.cache import RobotsEntry

#: Meta key of the file's answer for the request (plain data: :func:`answer_as_meta`).
META_KEY: Final = "robotstxt_tdmrep"
#: A preference's ``source`` by where TDMRep's value was read.
SOURCES: Final = {FILE: "tdmrep.json", HEADER: "tdm header", META: "tdm meta"}


def file_answer(entry: RobotsEntry, url: str) -> Answer:
    """What the site's ``tdmrep.json`` (``entry``) says of ``url``."""
    if entry.action is Action.PARSE and entry.rules is not None:
        return entry.rules.reservation(url)
    if entry.action is Action.UNREACHABLE:
        cause = entry.error or f"HTTP {entry.status}"
        return Answer(
            reserved=True,
            source=FILE,
            reason=f"{FILE} unreachable ({cause}) after {entry.failures} attempt(s), read as reserved until it answers",
        )
    return Answer(reason=f"no {FILE} (HTTP {entry.status}): the site does not implement TDMRep")


def preferences(answer: Answer, purposes: Iterable[str]) -> dict[str, Preference]:
    """The usage preference TDMRep states for each of ``purposes``; none when unset."""
    if answer.reserved is None or answer.source is None:
        return {}
    decision = DENY if answer.reserved else ALLOW
    source = SOURCES[answer.source]
    return {
        purpose: Preference(purpose, decision, True, None, answer.reason, source, answer.policy) for purpose in purposes
    }


def answer_as_meta(answer: Answer) -> dict[str, Any]:
    """The plain-data form carried in ``request.meta["robotstxt_tdmrep"]``."""
    return {"reserved": answer.reserved, "policy": answer.policy, "source": answer.source, "reason": answer.reason}


def answer_from_meta(meta: Mapping[str, Any] | None) -> Answer | None:
    if not meta:
        return None
    source = meta.get("source")
    policy = meta.get("policy")
    return Answer(
        reserved=meta.get("reserved"),
        policy=policy,
        source=source,
        reason=meta.get("reason") or "nothing stated",
        policy_source=source if policy is not None else None,
        policy_reason=meta.get("reason") if policy is not None else None,
    )
