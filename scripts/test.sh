#!/usr/bin/env bash
# The whole test suite on a fresh machine: virtualenv, Python packages (with the agent
# frameworks), Debian's prometheus (promtool) and chromium, then pytest. Extra arguments go
# to pytest (e.g. scripts/test.sh -m "not slow").
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" != 0 ] && SUDO="sudo"
missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
source scripts/setup-env.sh test,frameworks
.venv/bin/ruff check otel_cycleguard tests benchmarks quality
# the compiled core's own tests (cached build directory: see setup-env.sh)
PYO3_PYTHON="$PWD/.venv/bin/python" cargo test --quiet --release --manifest-path rust/cycleguard-core/Cargo.toml
exec .venv/bin/python -m pytest "$@"
