"""A third policy file that states preferences, registered through ROBOTSTXT_POLICY_FILES alone
(tests/test_policy_files.py): ``/.well-known/fixture.txt``, one rule a line, ``deny <purpose>
<path prefix>``. Importable without pytest: ``scrapy robots`` loads it in its own process."""

from __future__ import annotations

from urllib.parse import urlsplit

from scrapy_robots.policyfiles.preference import PreferenceFile, Stated
from scrapy_robots.status.policy import NETWORK, Action, StatusPolicy
from scrapy_robots.usage import DENY, Preference

FIXTURE = "/.well-known/fixture.txt"
PATH = f"{__name__}.Refusing"


class Refusing(PreferenceFile):
    name = "fixture.txt"
    path = FIXTURE
    stats = "robotstxt/fixture"
    record = "fixture.txt"
    policy = StatusPolicy(
        {"2xx": Action.PARSE, "4xx": Action.ALLOW, "5xx": Action.UNREACHABLE, NETWORK: Action.UNREACHABLE}
    )
    key = "fixture"
    meta_key = "robotstxt_fixture"
    sources = ("fixture.txt",)
    denied_reason = "Forbidden by fixture.txt"

    def read(self, entry):
        return [line.split() for line in entry.body.decode().splitlines() if len(line.split()) == 3]

    def _rule(self, entry, url, purpose):
        path = urlsplit(url).path
        rules = entry.rules if entry.action is Action.PARSE and entry.rules else ()
        for number, (word, named, prefix) in enumerate(rules, 1):
            if word == "deny" and named == purpose and path.startswith(prefix):
                return f"fixture.txt rule {number} ({word} {named} {prefix})"
        return None

    def says(self, entry, request, config):
        if entry is None:
            request.meta.pop(self.meta_key, None)
            return {}
        said = {}
        for purpose in self.purposes(config):
            rule = self._rule(entry, request.url, purpose)
            if rule is not None:
                said[purpose] = Preference(purpose, DENY, True, None, rule, "fixture.txt")
        request.meta[self.meta_key] = {purpose: pref.as_meta() for purpose, pref in said.items()}
        return said

    def explain(self, entry, url, config):
        if entry is None:
            return (Stated(self.purposes(config), "not read"),)
        found = []
        for purpose in self.purposes(config):
            rule = self._rule(entry, url, purpose)
            found.append(
                Stated((purpose,), f"{rule} denies {purpose}" if rule else "nothing stated", False if rule else None)
            )
        return tuple(found)
