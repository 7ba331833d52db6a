# Quick start: `make repro` (set up, then run both pipelines: the lesson's and the length study's) and
# `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: repro test lint format clean-venv

$(STAMP): requirements.txt constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	@touch $(STAMP)

repro: $(STAMP)  ## set up, then regenerate every result of both pipelines (dvc.yaml, study/dvc.yaml)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro -P

test: $(STAMP)  ## set up, then lint and run the test suite
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -n auto --dist worksteal --durations=30

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean-venv:
	rm -rf $(VENV)
