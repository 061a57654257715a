# One-command set-up: every target builds what it needs in .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
INSTALLED := $(VENV)/.installed
REPPY := $(VENV)/.reppy
REPPY_VERSION := 0.4.14
SCRAPY_TESTS := $(VENV)/scrapy-tests

.PHONY: install reppy scrapy-tests redis-server docs lint format test compat typecheck bench clean demo

install: $(INSTALLED)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): $(PY) setup.cfg setup.py
	$(PIP) install --upgrade pip setuptools wheel Cython
	$(PIP) install -e '.[test,docs,typing,record]'
	touch $@

# reppy 0.4.14 as published does not build on Python 3.11: its bundled C++ misses
# `#include <limits>`, and its 2019 Cython output includes longintrepr.h, which 3.11
# moved. Delete the generated robots.cpp so Cython regenerates it, and force-include
# <limits> (CXXFLAGS for newer setuptools, CFLAGS for older ones).
reppy: $(REPPY)

$(REPPY): $(INSTALLED)
	rm -rf $(VENV)/reppy-build && mkdir -p $(VENV)/reppy-build
	cd $(VENV)/reppy-build && ../bin/python -m pip download -q --no-deps --no-binary :all: reppy==$(REPPY_VERSION)
	cd $(VENV)/reppy-build && tar xzf reppy-$(REPPY_VERSION).tar.gz && rm reppy-$(REPPY_VERSION)/reppy/robots.cpp
	cd $(VENV)/reppy-build/reppy-$(REPPY_VERSION) && CFLAGS="-include limits" CXXFLAGS="-include limits" ../../bin/python -m pip install -q --no-build-isolation .
	rm -rf $(VENV)/reppy-build
	$(PY) -c "import reppy.robots"
	touch $@

# Scrapy's wheels ship no tests. tests/test_scrapy_suite.py runs Scrapy's own test file
# of its robots.txt middleware, from the installed version's sdist, on ours. Fetched once
# (order-only: a reinstall does not fetch it again, so `make test` works offline after).
scrapy-tests: $(SCRAPY_TESTS)

$(SCRAPY_TESTS): | $(INSTALLED)
	rm -rf $@.tmp && mkdir -p $@.tmp
	cd $@.tmp && ../bin/python -m pip download -q --no-deps --no-binary :all: scrapy==$$(../bin/python -c "import scrapy; print(scrapy.__version__)")
	cd $@.tmp && tar xzf scrapy-*.tar.gz --strip-components=1 --wildcards '*/PKG-INFO' '*/LICENSE' \
	  '*/tests/__init__.py' '*/tests/utils/__init__.py' '*/tests/utils/decorators.py' '*/tests/utils/robotstxt.py' \
	  '*/tests/test_downloadermiddleware_robotstxt.py' && rm scrapy-*.tar.gz
	mv $@.tmp $@

# The fleet tests run a real Redis (Debian's redis-server); `make demo` does not need it.
redis-server:
	@command -v redis-server >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server >/dev/null; }
	@command -v redis-server >/dev/null

# Nitpicky (-n): every cross-reference must resolve (docs/conf.py lists the few that cannot).
# A fresh environment (-E) each time: a kept one judges a page's references as they were.
docs: $(INSTALLED)
	$(PY) -m sphinx -E -n -W --keep-going -q -b html docs docs/_build/html

# ruff.toml holds the rules and the line length; `make format` applies the formatter.
lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(INSTALLED)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Most tests wait on real clocks (Crawl-delay, Retry-After, a Redis outage), so the suite
# runs on TEST_WORKERS workers, more than the cores (pytest-xdist); the tests marked slow
# start first, the modules of a lane (tests/conftest.py, LANES) stay on one worker, and the
# tests marked timing run at a higher CPU priority than the others.
# The ten slowest are printed at the end, to keep the loop watched.
TEST_WORKERS ?= 6
PYTEST_PARALLEL = -n $(TEST_WORKERS) --durations=10

test: $(INSTALLED) $(REPPY) $(SCRAPY_TESTS) redis-server lint docs
	$(PY) -m pytest -q $(PYTEST_PARALLEL)

# The Scrapy versions setup.cfg allows, beyond the newest that `make test` runs: the
# oldest with the oldest dependencies tox.ini pins, and one in the middle. Each gets a
# virtualenv of its own (.venv-compat-*, built once), the package installed from the
# checkout as a user would (not editable, again at each run), and a named subset of
# the suite: real crawls, the add-on, Crawl-delay, the page backoff, the command, the stop paths, the fleet.
# Scrapy's stock middleware is left out (-k "not stock"): that is Scrapy under test, not us.
COMPAT_OLDEST := 'scrapy==2.13.0' 'twisted<25' 'protego==0.7.0'
COMPAT_MIDDLE := 'scrapy==2.16.*'
COMPAT_TESTS := tests/test_compat.py tests/test_addon.py tests/test_crawl_delay.py tests/test_command.py tests/test_backoff.py \
  tests/test_stopping.py tests/test_stopping_paced.py tests/test_fleet.py tests/test_fleet_inprocess.py tests/test_directives_crawl.py

.venv-compat-%/.deps: setup.cfg setup.py
	rm -rf $(@D) && $(PYTHON) -m venv $(@D)
	$(@D)/bin/python -m pip --disable-pip-version-check -q install --upgrade pip setuptools wheel
	$(@D)/bin/python -m pip --disable-pip-version-check -q install $(COMPAT_$(shell echo $* | tr a-z A-Z)) '.[test]'
	rm -rf build scrapy_robots.egg-info
	touch $@

compat: .venv-compat-oldest/.deps .venv-compat-middle/.deps redis-server
	@for v in oldest middle; do \
	  rm -rf build scrapy_robots.egg-info; \
	  .venv-compat-$$v/bin/python -m pip --disable-pip-version-check -q install --no-deps --force-reinstall . || exit 1; \
	  rm -rf build scrapy_robots.egg-info; \
	  (cd / && $(CURDIR)/.venv-compat-$$v/bin/python -c 'import scrapy, twisted, scrapy_robots; \
	    print("== Scrapy", scrapy.__version__, "Twisted", twisted.__version__, "scrapy_robots from", scrapy_robots.__file__)'); \
	  .venv-compat-$$v/bin/pytest -q $(PYTEST_PARALLEL) -k "not stock" $(COMPAT_TESTS) || exit 1; \
	done

typecheck: $(INSTALLED)
	$(PY) -m mypy scrapy_robots

bench: $(INSTALLED) $(REPPY) redis-server
	$(PY) bench/parsers.py
	$(PY) bench/crawl_delay.py
	$(PY) bench/fleet.py

clean:
	rm -rf $(VENV) .venv-compat-* docs/_build build *.egg-info

# The main job: a real `scrapy crawl` of the example project against local demo sites.
# DEMO_ARGS passes options to it, e.g. make demo DEMO_ARGS="-s ROBOTSTXT_USAGE=train-ai".
DEMO_ARGS ?=
demo: $(INSTALLED)
	@$(PY) examples/demo_site.py & pid=$$!; \
	trap "kill $$pid 2>/dev/null" EXIT; sleep 1; \
	cd examples && PYTHONPATH=. ../$(VENV)/bin/scrapy crawl tour $(DEMO_ARGS)
