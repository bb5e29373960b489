# pidkit — the two set-up commands are `make demo` and `make test` (see README.md).
# Everything runs in a project-local virtualenv (.venv) created with the first Python >= 3.11 found.

SHELL := /bin/bash
VENV  := .venv
BIN   := $(VENV)/bin
PYTHON_CANDIDATES := python3.13 python3.12 python3.11 python3
PY ?= $(shell for p in $(PYTHON_CANDIDATES); do \
        if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
          echo $$p; break; fi; done)
STAMP := $(VENV)/.installed-dev

.PHONY: help install test lint typecheck unit demo bench stress clean system-tools compiler libdb docs docs-serve

help:
	@echo "make demo   — create .venv, install, start the resolver and web UI on SQLite with a demo NAAN"
	@echo "make test   — ruff, mypy (strict) and the test suite"
	@echo "make bench  — benchmarks against the peer tools (figures go to docs/performance.md)"
	@echo "make stress — the longer reliability and security suite"
	@echo "make docs   — the documentation site (mkdocs-material) in site/, checked with --strict"

$(BIN)/python:
	@if [ -z "$(PY)" ]; then echo "pidkit needs Python 3.11 or newer on PATH (python3.11, python3.12, …)" >&2; exit 2; fi
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# setup.py builds the optional C helper pidkit._speedups (Library.Link ids) in place; without a C compiler or
# the Python headers pidkit installs as pure Python (same ids, slower), and this says so.
$(STAMP): pyproject.toml setup.py src/pidkit/_speedups.c | $(BIN)/python
	@$(MAKE) --no-print-directory compiler
	@$(MAKE) --no-print-directory libdb
	$(BIN)/python -m pip install -q -e '.[dev]'
	@$(BIN)/python -c 'import importlib.util as u, sys; u.find_spec("pidkit._speedups") or print("make: pidkit._speedups was not built (no C compiler or Python headers): Library.Link ids use the pure-Python fallback", file=sys.stderr)'
	@touch $@

# The C compiler the venv's Python builds extensions with (sysconfig CC, or $$CC): installed with apt-get
# when missing and we are root; otherwise say that the pure-Python fallback will be used.
compiler: | $(BIN)/python
	@cc=$$($(BIN)/python -c 'import os, shlex, sysconfig; print(shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")[0])'); \
	if command -v "$$cc" >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: no C compiler ($$cc): installing gcc for pidkit's optional C helper"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc; \
	else echo "make: no C compiler ($$cc; sudo apt-get install -y gcc): pidkit installs with the pure-Python fallback" >&2; fi

# BerkeleyDB's headers, which the berkeleydb package (the noid extra, in dev: reading NOID minter
# databases) builds against: installed with apt-get when missing and we are root; otherwise say so.
libdb:
	@if [ -f /usr/include/db.h ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: no BerkeleyDB headers: installing libdb-dev for the noid extra (berkeleydb)"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libdb-dev; \
	else echo "make: no BerkeleyDB headers (sudo apt-get install -y libdb-dev): berkeleydb cannot be built" >&2; fi

install: $(STAMP)

# ruff, and the import-linter contracts of pyproject.toml (the layering DESIGN.md and docs/architecture.md describe)
lint: install
	$(BIN)/ruff check src tests benchmarks stress tools
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# System tools some tests drive: Debian's chromium (browser tests), nginx (the nginx recipes in docs/ and
# deploy/), fish (its completion script is loaded by a test), gcc (the C helper pidkit._speedups, which a
# test requires under CI; `make install` already installs it before building pidkit, see `compiler`),
# systemd (`systemd-analyze verify` of the units in deploy/) and curl (the ARK resolver quick start).
# Installed where missing when we can (root + apt-get); otherwise say what is missing: the browser, nginx
# and fish tests then fail under CI (CI=true) and are skipped elsewhere, the deploy and docs tests fail.
# hadolint (the Dockerfile's linter), build and mkdocs-material come with the dev extra.
SYSTEM_TOOLS := /usr/bin/chromium:chromium /usr/sbin/nginx:nginx-light /usr/bin/fish:fish /usr/bin/gcc:gcc \
	/usr/bin/systemd-analyze:systemd /usr/bin/curl:curl
system-tools:
	@missing=""; for t in $(SYSTEM_TOOLS); do [ -x "$${t%%:*}" ] || missing="$$missing $${t##*:}"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	else echo "make: missing system packages:$$missing (sudo apt-get install -y$$missing)" >&2; fi

# The PostgreSQL tests run against $$PIDKIT_TEST_POSTGRES_URL; unset, against the local server when it
# answers (as CI and the development machines have it), and make says which, or that they are skipped.
LOCAL_POSTGRES_URL := postgresql://postgres@127.0.0.1:5432/test
WITH_POSTGRES = url="$${PIDKIT_TEST_POSTGRES_URL:-}"; \
	if [ -z "$$url" ]; then \
	  if $(BIN)/python -c 'import sys, psycopg; psycopg.connect(sys.argv[1], connect_timeout=3).close()' \
	       "$(LOCAL_POSTGRES_URL)" 2>/dev/null; then \
	    url="$(LOCAL_POSTGRES_URL)"; echo "make: PostgreSQL tests use the local server $$url"; \
	  else echo "make: no PostgreSQL at $(LOCAL_POSTGRES_URL) and PIDKIT_TEST_POSTGRES_URL unset:" \
	            "the PostgreSQL tests are skipped (CI=true fails them)" >&2; fi; \
	fi; PIDKIT_TEST_POSTGRES_URL="$$url"

# -n auto: one pytest worker per core (pytest-xdist); --dist worksteal: an idle worker takes
# tests queued on the other (a few tests take half a minute).  PYTEST_ARGS="-n 0" runs serially.
# compileall first: the hundreds of `python -m pidkit` processes the tests start then read pidkit's
# bytecode instead of compiling it each (0.3 s a start instead of 0.5 where PYTHONDONTWRITEBYTECODE is set).
unit: install system-tools
	@$(BIN)/python -m compileall -q src
	@$(WITH_POSTGRES) $(BIN)/pytest -q -n auto --dist worksteal $(PYTEST_ARGS)

test: lint typecheck unit

demo: install
	$(BIN)/python -m pidkit serve --demo

# The PostgreSQL legs use the local server (as CI and the development machines have it); override as needed.
PIDKIT_BENCH_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test
bench: install
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	PIDKIT_BENCH_POSTGRES_URL=$(PIDKIT_BENCH_POSTGRES_URL) $(BIN)/python benchmarks/run.py $(BENCH_ARGS)

# The stress suite also needs wrk (Debian) for its load items and atheris (PyPI) for coverage-guided fuzzing.
stress: install
	@$(MAKE) --no-print-directory system-tools SYSTEM_TOOLS="/usr/bin/wrk:wrk"
	@$(BIN)/python -c 'import atheris' 2>/dev/null || $(BIN)/python -m pip install -q atheris \
	  || echo "make: atheris did not install: the fuzz items run hypothesis only" >&2
	@$(WITH_POSTGRES) $(BIN)/pytest -q -p no:cacheprovider stress $(PYTEST_ARGS)

# The documentation site: docs/*.md with mkdocs-material (mkdocs.yml), into site/.  --strict: a broken
# link, a missing page or a page left out of the navigation fails the build (tests/test_docs.py runs the
# same build under `make test`).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist site src/pidkit/*.so
