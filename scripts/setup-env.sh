#!/usr/bin/env bash
# Creates .venv (once) and installs the project with the extras named in $1 (default: none).
# Sourced by demo.sh and test.sh so each of them works on a fresh machine.
set -euo pipefail
EXTRAS="${1:-}"
# The detection core is compiled (rust/cycleguard-core): pip builds it with cargo. Its build
# directory lives outside the work tree and is reused, so a rebuild after a change is
# incremental and an unchanged core costs nothing.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-cycleguard/target}"
if ! command -v cargo >/dev/null 2>&1; then
    echo "error: building otel-cycleguard needs a Rust toolchain (cargo, on PATH): the detection" >&2
    echo "core is compiled (rust/cycleguard-core). Install one with rustup (https://rustup.rs)." >&2
    exit 1
fi
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "==> creating virtualenv .venv"
    "$PYTHON" -m venv .venv
fi
STAMP=".venv/.installed-${EXTRAS:-core}"
# The compiled core is rebuilt when its sources changed since the last install, or when the
# extension is missing (a fresh clone reusing a .venv).
core_changed() {
    [ -n "$(find rust -newer "$STAMP" \( -name '*.rs' -o -name 'Cargo.*' \) -print -quit 2>/dev/null)" ] ||
        ! compgen -G "otel_cycleguard/_core*.so" >/dev/null
}
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || { [ -f requirements/frameworks.txt ] && [ requirements/frameworks.txt -nt "$STAMP" ]; } || core_changed; then
    echo "==> installing otel-cycleguard${EXTRAS:+ [$EXTRAS]} into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    SPEC="."
    [ -n "$EXTRAS" ] && SPEC=".[$EXTRAS]"
    CONSTRAINTS=()
    [ -f requirements/constraints.txt ] && CONSTRAINTS=(-c requirements/constraints.txt)
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${CONSTRAINTS[@]}" -e "$SPEC"
    touch "$STAMP"
fi
