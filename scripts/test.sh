#!/usr/bin/env bash
# The whole test suite on a fresh machine: virtualenv, Python packages (with the agent
# frameworks), Debian's prometheus (promtool) and chromium, the pinned OpenTelemetry Collector
# (with Go, cached), then pytest. Extra arguments go
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
# The real OpenTelemetry Collector that tests/service/test_collector_*.py run: built once with
# Go (about 5 minutes on a cold machine), then cached outside the work tree, keyed by
# collector/manifest.yaml; those tests skip, saying so, where neither Go nor the cache exists.
if collector=$(bash scripts/build-collector.sh 2>/tmp/otel-cycleguard-collector-build.log); then
    echo "==> Collector: $collector"
else
    echo "==> no Collector binary (see /tmp/otel-cycleguard-collector-build.log): its tests skip or fail"
fi
.venv/bin/ruff check otel_cycleguard tests benchmarks quality
.venv/bin/ruff format --check --quiet otel_cycleguard tests benchmarks quality
# the compiled core's own tests (cached build directory: see setup-env.sh)
PYO3_PYTHON="$PWD/.venv/bin/python" cargo test --quiet --release --manifest-path rust/cycleguard-core/Cargo.toml
exec .venv/bin/python -m pytest "$@"
