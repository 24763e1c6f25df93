# pe-notebooks: every set-up step lives here, so a fresh machine needs only `make lab` or `make test`.
#   make lab      create .venv if missing, install the lock + this package, open JupyterLab on notebooks/
#   make test     same bootstrap, then pytest over tests/ and strict nbval over every notebook
#   make student  write student/: the notebooks with exercise solutions replaced by stubs (git-ignored)
# With .venv present and requirements.lock / pyproject.toml unchanged, nothing is reinstalled.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
# Root (containers, CI) must opt in to running Jupyter; a normal user needs nothing.
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg

.PHONY: lab test test-fast notebooks student lock clean help

help:
	@echo "make lab    - set up (first time) and open JupyterLab on notebooks/"
	@echo "make test   - set up (first time) and run every test and every notebook"
	@echo "make student - write the student edition (solutions replaced by stubs) to student/"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The stamp records that the lock and the package were installed; it is remade only when
# requirements.lock or pyproject.toml is newer than it.
$(STAMP): requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=notebooks --LabApp.news_url=None $(ALLOW_ROOT)

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest tests notebooks $(NBVAL) -q

# Re-execute every notebook in place (after changing one), so its stored outputs are fresh.
notebooks: $(STAMP)
	MPLBACKEND=Agg $(BIN)/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb

# The student edition: every notebook with its exercise solutions replaced by stubs, outputs cleared.
student: $(STAMP)
	$(BIN)/python -m pe_helpers.student --src notebooks --out student

# Rebuild the lock from the ranges in pyproject.toml (needs network access to PyPI).
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet torch==2.13.0 -e '.[test,present]'
	{ head -3 requirements.lock; .venv-lock/bin/pip freeze --all --exclude-editable \
		| grep -vE '^(pip|wheel)==' | sed 's/^torch==\(.*\)+cpu/torch==\1/' | sort -f; } > requirements.lock.new
	mv requirements.lock.new requirements.lock && rm -rf .venv-lock

clean:
	rm -rf $(VENV) build student .pytest_cache
