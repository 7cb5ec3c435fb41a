#!/usr/bin/env bash
# Creates .venv (once) and installs the project with the extras named in $1 (default: none).
# Sourced by demo.sh and test.sh so each of them works on a fresh machine.
set -euo pipefail
EXTRAS="${1:-}"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "==> creating virtualenv .venv"
    "$PYTHON" -m venv .venv
fi
STAMP=".venv/.installed-${EXTRAS:-core}"
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || { [ -f requirements/frameworks.txt ] && [ requirements/frameworks.txt -nt "$STAMP" ]; }; then
    echo "==> installing otel-cycleguard${EXTRAS:+ [$EXTRAS]} into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    SPEC="."
    [ -n "$EXTRAS" ] && SPEC=".[$EXTRAS]"
    CONSTRAINTS=()
    [ -f requirements/constraints.txt ] && CONSTRAINTS=(-c requirements/constraints.txt)
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${CONSTRAINTS[@]}" -e "$SPEC"
    touch "$STAMP"
fi
