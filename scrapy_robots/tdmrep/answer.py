"""What TDMRep says of one resource, from one source or all three, and how they combine."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

#: Where a value was read: the site's ``/.well-known/tdmrep.json``, the response's header
#: fields, the HTML head's meta tags.
FILE: Final = "tdmrep.json"
HEADER: Final = "header"
META: Final = "meta"


@dataclass(frozen=True)
class Answer:
    """``reserved``: ``True`` (``tdm-reservation`` 1: TDM rights are reserved), ``False`` (0:
    not reserved), ``None`` (unset: nothing stated, no rule matched, or a value that is
    neither 0 nor 1). ``policy``: the ``tdm-policy`` URL, when one applies.

    ``source`` and ``reason`` say where ``reserved`` was read (:data:`FILE`, :data:`HEADER`,
    :data:`META`) and what said it, the rule, header or tag (when unset: what left it
    unset, a rule whose value is neither 0 nor 1, no rule matching); ``policy_source`` and
    ``policy_reason`` the same for ``policy``, which may come from another source (a
    header that states a policy only leaves the file's reservation as it was).
    ``rule``: the 1-based index of the ``tdmrep.json`` rule that decided, if one did.
    ``problems``: what was ignored on the way (a value other than 0 or 1, a tag without
    content, an unusable file), for a log line; they never raise.
    """

    reserved: bool | None = None
    policy: str | None = None
    source: str | None = None
    reason: str = "nothing stated"
    policy_source: str | None = None
    policy_reason: str | None = None
    rule: int | None = None
    problems: tuple[str, ...] = ()

    @property
    def stated(self) -> bool:
        """Whether a source stated ``tdm-reservation`` (0 or 1)."""
        return self.reserved is not None

    def explain(self) -> str:
        """One line: the verdict, what said it, and the policy's origin when it differs."""
        verdict = {True: "reserved", False: "not reserved", None: "unset"}[self.reserved]
        text = f"TDM {verdict}: {self.reason}"
        if self.policy is not None:
            text += f"; tdm-policy {self.policy}"
            if self.policy_reason is not None and self.policy_reason != self.reason:
                text += f" ({self.policy_reason})"
        return text


#: Nothing stated anywhere.
UNSET: Final = Answer()


def combine(file_answer: Answer | None, header_answer: Answer | None, meta_answer: Answer | None) -> Answer:
    """The three sources in the report's order of processing: the file, then the header
    fields, then the meta tags; each value a later source states supersedes the earlier
    one, property by property, and a value a source does not state (``None``) never
    resets one already set. ``None`` for a source not consulted (no file, not HTML).

    A ``tdm-policy`` is kept only beside ``reserved`` ``True`` or unset: with 0 the report
    says agents "SHOULD NOT process tdm-policy", so the combined answer drops it (and says so).
    """
    result = UNSET
    problems: list[str] = []
    for answer in (file_answer, header_answer, meta_answer):
        if answer is None:
            continue
        problems.extend(problem for problem in answer.problems if problem not in problems)
        if answer.reserved is not None:
            result = replace(result, reserved=answer.reserved, source=answer.source, reason=answer.reason)
            result = replace(result, rule=answer.rule)
        elif result.reserved is None and answer.reason != UNSET.reason:
            # Still unset: the latest source's account of why (no rule matched, a bad value).
            result = replace(result, reason=answer.reason, source=answer.source, rule=answer.rule)
        if answer.policy is not None:
            result = replace(
                result, policy=answer.policy, policy_source=answer.policy_source, policy_reason=answer.policy_reason
            )
    if result.reserved is False and result.policy is not None:
        problems.append(f"tdm-policy {result.policy} ({result.policy_reason}) ignored: TDM rights are not reserved")
        result = replace(result, policy=None, policy_source=None, policy_reason=None)
    return replace(result, problems=tuple(problems))
