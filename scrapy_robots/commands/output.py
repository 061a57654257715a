"""What ``scrapy robots`` prints, and its exit status."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from scrapy_robots.commands.page import brief_suffix, format_page
from scrapy_robots.commands.robots_text import (
    Paint,
    format_brief,
    format_compare,
    format_lint,
    format_report,
    format_summary,
    verdict_word,
)
from scrapy_robots.lint import Finding
from scrapy_robots.status.policy import Action

if TYPE_CHECKING:
    import argparse


#: Exit statuses, as ``grep``'s: all allowed, some denied, an error; and 128 + SIGINT,
#: as shells expect after Ctrl-C.
EXIT_ALLOWED, EXIT_DENIED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


class Output:
    """Prints the answers: JSON lines, a report per URL, one line per URL, a table."""

    def __init__(self, opts: argparse.Namespace, paint: Paint, several_agents: bool):
        self.opts = opts
        self.paint = paint
        self.several_agents = several_agents
        self.local_file = "standard input" if opts.file == "-" else opts.file

    def answers(self, results: list[dict[str, Any]], file_lint: list[Finding] | None) -> None:
        opts = self.opts
        if opts.json:
            if file_lint is not None and not results:
                print(json.dumps({"file": opts.file, "lint": [asdict(f) for f in file_lint]}))
            for result in results:
                if file_lint is not None:
                    result["lint"] = [asdict(f) for f in file_lint]
                print(json.dumps(with_verdict(result)))
            return
        lines: list[str] = []
        if opts.brief:
            # One line per URL, errors included, in the order given: a script can paste it.
            width = max((len(r.get("user_agent") or "") for r in results), default=0) if self.several_agents else 0
            words = max((len(verdict_word(r)) for r in results), default=0)
            lines.extend(format_brief(r, self.paint, width, max(7, words)) + brief_suffix(r) for r in results)
        else:
            self._errors(results)
            # An unreachable robots.txt is an error with a report (the policy's verdict).
            answered = [r for r in results if "robots_txt" in r]
            if opts.compare:
                lines.append(format_compare(answered, self.paint, self.several_agents))
            else:
                lines.extend(
                    format_report(r, opts.file, self.paint, self.several_agents) + format_page(r, self.paint)
                    for r in answered
                )
        if file_lint is not None:
            lines.append(format_lint(self.local_file, file_lint, self.paint))
        elif opts.lint:
            seen: set[str] = set()
            for result in results:
                where = (result.get("robots_txt") or {}).get("url")
                if where and where not in seen:
                    seen.add(where)
                    lines.append(format_lint(where, result["lint"], self.paint))
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")

    def summaries(self, results: list[dict[str, Any]], file_summary: dict[str, Any] | None) -> None:
        if self.opts.json:
            if file_summary is not None:
                print(json.dumps({"file": self.opts.file, "summary": file_summary}))
            seen: set[str] = set()
            for result in results:
                where = (result.get("robots_txt") or {}).get("url")
                if where is None:
                    print(json.dumps({"url": result["url"], "error": result.get("error")}))
                elif where not in seen:
                    seen.add(where)
                    print(json.dumps({"robots_txt": result["robots_txt"], "summary": result["summary"]}))
            return
        self._errors(results)
        if file_summary is not None:
            print(format_summary(self.local_file, file_summary, self.paint))
        seen = set()
        for result in results:
            where = (result.get("robots_txt") or {}).get("url")
            if where and where not in seen:
                seen.add(where)
                print(format_summary(self.local_file or where, result["summary"], self.paint))

    @staticmethod
    def _errors(results: list[dict[str, Any]]) -> None:
        for result in results:
            error = result.get("error")
            if error:
                where = "" if result["url"] in error else f"{result['url']}: "
                print(f"scrapy robots: error: {where}{error}", file=sys.stderr)


def with_verdict(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with ``verdict`` after ``allowed``: the word the text outputs give."""
    shown: dict[str, Any] = {}
    for key, value in result.items():
        shown[key] = value
        if key == "allowed":
            shown["verdict"] = verdict_word(result)
    return shown


def unreachable_error(result: dict[str, Any]) -> str | None:
    robots = result.get("robots_txt") or {}
    if robots.get("policy") != Action.UNREACHABLE.value:
        return None
    outcome = robots["error"] or f"HTTP {robots['status']}"
    return f"{robots['url']} unreachable: {outcome}"


def exit_status(results: list[dict[str, Any]], file_lint: list[Finding] | None = None, strict: bool = False) -> int:
    """2 on any error (an unreachable robots.txt is one), else 1 if a URL is denied
    (or, with only ``--lint``, or with ``--strict``, if a line is at fault), else 0."""
    if any(r.get("error") for r in results):
        return EXIT_ERROR
    if any(not r["allowed"] for r in results):
        return EXIT_DENIED
    if file_lint and (strict or not results):
        return EXIT_DENIED
    if strict and any(r.get("lint") for r in results):
        return EXIT_DENIED
    return EXIT_ALLOWED


@contextmanager
def quiet_on_closed_pipe() -> Iterator[None]:
    """Print inside: if the reader goes away (``| head``), stop quietly, as CLI tools do.
    Python would flush stdout again at exit and print the error: it goes to /dev/null."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
