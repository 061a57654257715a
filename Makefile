# One-command set-up: every target builds what it needs in .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
INSTALLED := $(VENV)/.installed
REPPY := $(VENV)/.reppy
REPPY_VERSION := 0.4.14

.PHONY: install reppy redis-server docs test typecheck bench clean demo

install: $(INSTALLED)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): $(PY) setup.cfg setup.py
	$(PIP) install --upgrade pip setuptools wheel Cython
	$(PIP) install -e '.[test,docs,typing]'
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

# The fleet tests run a real Redis (Debian's redis-server); `make demo` does not need it.
redis-server:
	@command -v redis-server >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server >/dev/null; }
	@command -v redis-server >/dev/null

docs: $(INSTALLED)
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

test: $(INSTALLED) $(REPPY) redis-server docs
	$(PY) -m pytest -q

typecheck: $(INSTALLED)
	$(PY) -m mypy scrapy_robots

bench: $(INSTALLED) $(REPPY) redis-server
	$(PY) bench/parsers.py
	$(PY) bench/crawl_delay.py
	$(PY) bench/fleet.py

clean:
	rm -rf $(VENV) docs/_build build *.egg-info

# The main job: a real `scrapy crawl` of the example project against local demo sites.
demo: $(INSTALLED)
	@$(PY) examples/demo_site.py & pid=$$!; \
	trap "kill $$pid 2>/dev/null" EXIT; sleep 1; \
	cd examples && PYTHONPATH=. ../$(VENV)/bin/scrapy crawl tour
