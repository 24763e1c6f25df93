# pe-notebooks: every set-up step lives here, so a fresh machine needs only `make lab` or `make test`.
#   make lab      create .venv if missing, install the lock + this package, open JupyterLab on notebooks/
#   make test     same bootstrap, then pytest over tests/ and strict nbval over every notebook
#   make student  write student/: the notebooks with exercise solutions replaced by stubs (git-ignored)
#   make assignments / release / grade   the exercises as an nbgrader course (build/course/), and its marks (build/grades/)
# With .venv present and requirements.lock / pyproject.toml unchanged, nothing is reinstalled.
# Python >= 3.11 is needed (requirements.lock pins versions that need it); PYTHON=... picks the interpreter
# that creates .venv. tools/bootstrap-venv.sh checks it before creating .venv, rebuilds a broken or
# foreign .venv (with a message saying why), and holds a lock so concurrent make runs are safe.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
# The edition: `make lab LANG=zh` (also present, student) picks the Chinese edition in notebooks/zh.
# Only the exact value zh does; a system locale such as LANG=zh_CN.UTF-8 keeps the English default,
# and the recipes' own locale is reset so that `LANG=zh` is not passed on to Jupyter as a locale.
EDITION := $(if $(filter zh,$(LANG)),zh,en)
ifeq ($(EDITION),zh)
override LANG := C.UTF-8
EDITION_DIR := notebooks/zh
else
EDITION_DIR := notebooks
endif
LAB_DIR ?= $(EDITION_DIR)
# Root (containers, CI) must opt in to running Jupyter; a normal user needs nothing.
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg

.PHONY: lab present hub hub-users assignments release grade test test-grading test-ranges test-slides notebooks student lock clean help FORCE

help:
	@echo "make lab    - set up (first time) and open JupyterLab on notebooks/"
	@echo "make test   - set up (first time) and run every test and every notebook"
	@echo "make present NB=05 - serve notebook 05 as live slides (Voila, Reveal.js) for projecting in class; LANG=zh the Chinese deck; no NB lists the decks"
	@echo "make student - write the student edition (solutions replaced by stubs) to student/"
	@echo "make hub    - a JupyterHub on this machine for a class (http://127.0.0.1:8000/; HUB_IP=0.0.0.0 for the room's network); make hub-users NAMES='ann bob' adds students"
	@echo "make assignments - write the nbgrader course build/course/ (one assignment per notebook 01-06 and language: nb01 ... nb06_zh)"
	@echo "make release ASSIGNMENTS=nb03 - generate and release assignment nb03 (nb03_zh: the Chinese one) for the hub's students to fetch"
	@echo "make grade  - collect, autograde and return feedback for every released assignment, then build/grades/grades.csv and one feedback page per student"
	@echo "make test-grading - the slow grading tests: a class of 30 submissions, and homework through the hub (run by CI)"
	@echo "make test-ranges - the tests (no browser) on the lowest and the newest dependency versions pyproject.toml claims"

# The stamp records that the lock and the package were installed. The script runs every time (it is
# quick when all is well): it checks .venv, and installs only when the stamp is missing or older than
# requirements.lock or pyproject.toml.
$(STAMP): FORCE
	@sh tools/bootstrap-venv.sh "$(PYTHON)" "$(VENV)"

# The Extension Manager is read-only (LabApp.extension_manager=readonly): it lists what is installed
# and never queries the package index, so the lab starts cleanly offline.
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=$(LAB_DIR) --LabApp.news_url=None --LabApp.extension_manager=readonly $(ALLOW_ROOT)

# Present mode for a lecture: one notebook as live Reveal.js slides (Voila, code hidden, apps live).
#   make present           lists the decks;   make present NB=05   serves notebooks/05_*.ipynb
#   make present NB=03 LANG=zh   serves the Chinese edition's deck, notebooks/zh/03_*.ipynb
# A thin wrapper over `python -m pe_helpers.present` (127.0.0.1 only, token kept, foreign Host
# headers refused): open the URL it prints (PRESENT_TOKEN=... fixes the token). The notebook runs
# when the server starts (a preheated kernel): the first slide shows at once after "Deck ready".
# NB_DIR lets the browser tests present a copy of notebooks/. Ctrl+C stops it.
PRESENT_PORT  ?= 8866
PRESENT_TOKEN ?=
NB_DIR        ?= $(EDITION_DIR)
present: $(STAMP)
	@exec $(BIN)/python -m pe_helpers.present $(if $(strip $(NB)),'$(NB)') --nb-dir '$(NB_DIR)' \
		--port '$(PRESENT_PORT)' $(if $(PRESENT_TOKEN),--token '$(PRESENT_TOKEN)')

# The course on a JupyterHub (pe_helpers/hub.py, deploy/hub/): its proxy, configurable-http-proxy, comes from npm
# (pinned in deploy/hub/package-lock.json, installed once); each student gets a copy of the student edition
# (HUB_EDITION=full: the notebooks with solutions; LANG=zh: the Chinese edition). The first start writes
# build/hub/passwords-for-the-lecturer.csv (a teacher and HUB_STUDENTS students). Ctrl+C stops it.
HUB_PORT     ?= 8000
HUB_IP       ?= 127.0.0.1
HUB_EDITION  ?= student
HUB_STUDENTS ?= 30
PROXY_STAMP  := deploy/hub/node_modules/.installed
$(PROXY_STAMP): deploy/hub/package.json deploy/hub/package-lock.json
	@command -v npm >/dev/null || { echo "make hub: npm is missing (Node.js >= 18 provides it; the hub's proxy is an npm package)" >&2; exit 2; }
	cd deploy/hub && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
hub: $(STAMP) $(PROXY_STAMP)
	$(if $(filter student,$(HUB_EDITION)),$(BIN)/python -m pe_helpers.student --src $(EDITION_DIR) --out $(if $(filter zh,$(EDITION)),student/zh,student))
	@exec $(BIN)/python -m pe_helpers.hub serve --port '$(HUB_PORT)' --ip '$(HUB_IP)' --edition '$(HUB_EDITION)' \
		--lang $(EDITION) --students '$(HUB_STUDENTS)'
hub-users: $(STAMP)
	@$(BIN)/python -m pe_helpers.hub add-users $(NAMES)

# Homework with nbgrader (pe_helpers/grading.py; TEACHING.md, "Homework and grades"). `make assignments` writes the
# course directory from the notebooks; `make release ASSIGNMENTS='nb03 nb03_zh'` runs nbgrader's generate_assignment
# and release_assignment for them (students can then fetch them). `make grade` runs collect, autograde, generate_feedback and release_feedback for every released
# assignment (ASSIGNMENTS='nb03 nb03_zh' for some), then exports build/grades/grades.csv and feedback/<student>.html.
# The exchange is the hub's (build/hub/exchange), where `make hub`'s students fetch and submit. nbgrader runs
# alembic from .venv/bin, hence the PATH.
COURSE      ?= build/course
EXCHANGE    ?= build/hub/exchange
ASSIGNMENTS ?=
assignments: $(STAMP)
	$(BIN)/python -m pe_helpers.grading assignments --src notebooks --course '$(COURSE)' --exchange '$(EXCHANGE)'
release: $(STAMP)
	$(BIN)/python -m pe_helpers.grading release --course '$(COURSE)' $(ASSIGNMENTS)
grade: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" MPLBACKEND=Agg OMP_NUM_THREADS=1 $(BIN)/python -m pe_helpers.grading grade \
		--course '$(COURSE)' --exchange '$(EXCHANGE)' --out build/grades --lang $(EDITION) $(ASSIGNMENTS)

# Four workers on two cores: tests/browser/ runs on one of them, first (tests/conftest.py), and mostly waits (for a
# held key, a kernel, Chromium); the other three take the CPU it leaves, at a lower priority (os.nice). Measured here:
# 363 s with two workers, 313 s with three, 264 s with four. One thread per torch process: workers and their kernels each starting a
# pool of two threads on two cores only made them wait for each other.
# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set (CI sets it): each worker, kernel and server would
# otherwise compile pe_helpers and pytest would rewrite every test module again (about 4 s per worker here).
test: $(STAMP) $(PROXY_STAMP)
	PYTHONDONTWRITEBYTECODE= MPLBACKEND=Agg OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest tests notebooks $(NBVAL) -q -n 4 \
		--dist loadfile --no-loadscope-reorder --ignore=tests/grading

# The grading tests (tests/grading/, left out of `make test`: several minutes, each submission runs a whole notebook):
# a class of 30 synthetic submissions autograded into nbgrader's gradebook (it writes the seconds per submission and
# the gradebook's table counts to its temporary folder and prints them with -s), and homework through the real hub.
# CI runs it after `make test`.
test-grading: $(STAMP) $(PROXY_STAMP)
	PYTHONDONTWRITEBYTECODE= MPLBACKEND=Agg OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest tests/grading -q -s

# The tests (without the browser) on the versions pyproject.toml claims: every direct dependency at its lower
# bound, then the newest releases inside the ranges, each in an environment of its own (.venv-lowest,
# .venv-newest; tools/test-ranges.sh). CI runs it after `make test`; about 3 minutes each once installed.
test-ranges:
	@sh tools/test-ranges.sh lowest
	@sh tools/test-ranges.sh newest

# Only the slide decks in Chromium (every deck, every slide, both screen sizes; also part of `make test`):
# the quick check after changing a notebook's slide metadata.
test-slides: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest tests/browser/test_slides.py -q

# Rebuild every notebook from its text source (notebooks/NN_*.py, jupytext percent format) and
# execute it, so the committed .ipynb and its stored outputs match the source. NB=03 rebuilds one;
# LANG=zh rebuilds the Chinese edition (notebooks/zh/, from the same sources and notebooks/locale/zh/) and lists
# the translation units still fuzzy or untranslated (CONTRIBUTING.md, *Translating*).
notebooks: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pe_helpers.editions build --execute $(if $(filter zh,$(EDITION)),--lang zh) $(if $(NB),--only $(NB))

# The student edition: every notebook with its exercise solutions replaced by stubs, outputs cleared.
student: $(STAMP)
	$(BIN)/python -m pe_helpers.student --src $(EDITION_DIR) --out $(if $(filter zh,$(EDITION)),student/zh,student)

# Rebuild the lock from the ranges in pyproject.toml (needs network access to PyPI).
lock:
	@sh tools/bootstrap-venv.sh --check "$(PYTHON)"
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet torch==2.13.0 -e '.[test,present,hub,grade]'
	{ head -3 requirements.lock; .venv-lock/bin/pip freeze --all --exclude-editable \
		| grep -vE '^(pip|wheel)==' | sed 's/^torch==\(.*\)+cpu/torch==\1/' | sort -f; } > requirements.lock.new
	mv requirements.lock.new requirements.lock && rm -rf .venv-lock

clean:
	rm -rf $(VENV) $(VENV).lock $(VENV)-lowest $(VENV)-newest $(VENV)-*.constraints.txt build student .pytest_cache
