# innowatch: `make run` starts it, `make test` tests it. Both install what they need first.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
RUN_DEBS := libmariadb-dev pkg-config sysstat
TEST_DEBS := $(RUN_DEBS) chromium sysbench docker-compose prometheus

.PHONY: run test bench soak demo lint deps test-deps setup migrate clean

# Debian packages, installed only when missing (mysqlclient builds against libmariadb-dev).
define apt_ensure
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi
endef

$(VENV)/.installed: requirements.txt
	$(call apt_ensure,$(RUN_DEBS))
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

deps: $(VENV)/.installed

test-deps: deps
	$(call apt_ensure,$(TEST_DEBS))

setup: deps
	$(PY) scripts/bootstrap.py env
	$(PY) scripts/bootstrap.py db
	$(PY) manage.py migrate --no-input -v 0

run: setup
	$(PY) manage.py setup_local
	$(PY) manage.py collectstatic --no-input -v 0
	./scripts/run_all.sh

test: test-deps
	$(PY) scripts/bootstrap.py env
	$(PY) scripts/bootstrap.py db
	$(PY) manage.py makemigrations --check --dry-run -v 0
	$(PY) -m pytest -m "not slow"

# make bench = the figures (a few minutes) then the soak (SOAK_MINUTES, default 10); make soak alone.
SOAK_MINUTES ?= 10
bench: setup test-deps
	$(PY) -m bench.run
	$(PY) -m bench.soak --minutes $(SOAK_MINUTES)

soak: setup
	$(PY) -m bench.soak --minutes $(SOAK_MINUTES)

demo: setup test-deps
	$(PY) manage.py setup_local
	$(PY) manage.py demo

lint: deps
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) staticfiles var .pytest_cache
