"""`scrapy robots` as a new user meets it (issue #14): right answers, clear errors, and
what users of other robots.txt testers expect. The real command, run as a subprocess."""

from __future__ import annotations

from pathlib import Path

from test_command import ROBOTS, _json, robots, site  # noqa: F401 - fixtures


def _without(tmp_path: Path, *packages: str) -> dict[str, str]:
    """An environment in which ``packages`` cannot be imported, as on a fresh install
    where reppy did not build: a package of that name that raises ImportError comes first."""
    shadow = tmp_path / "shadow"
    for package in packages:
        (shadow / package).mkdir(parents=True, exist_ok=True)
        (shadow / package / "__init__.py").write_text(f"raise ImportError('No module named {package}')\n")
    return {"PYTHONPATH": str(shadow)}


# -- --compare on an install without reppy ---------------------------------------------


def test_compare_leaves_out_backends_that_are_not_installed(robots, tmp_path):
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nDisallow: /private\nCrawl-delay: 2\n")
    env = _without(tmp_path, "reppy", "jwm")
    out = robots("--file", str(path), "--compare", "/private/x", "/ok", env=env)
    assert out.returncode == 0 or out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    header = lines[0].split()
    assert "reppy" not in header and "google" not in header
    assert header[:5] == ["URL", "rfc9309", "protego", "python", "rerp"]
    assert not any("differ" in line for line in lines), out.stdout
    crawl_delay = next(line for line in lines if line.startswith("Crawl-delay"))
    assert crawl_delay.split()[1:] == ["2s"] * 4
    missing = [line for line in lines if "not installed" in line]
    assert [line.split(":")[0] for line in missing] == ["reppy", "google"]
    [answer] = _json(robots("--file", str(path), "--compare", "--json", "/ok", env=env).stdout)
    assert set(answer["compare"]) == {"rfc9309", "protego", "python", "rerp"}
    assert set(answer["not_installed"]) == {"reppy", "google"}
