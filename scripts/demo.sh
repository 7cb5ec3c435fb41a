#!/usr/bin/env bash
# The main job: a scripted, OpenTelemetry-instrumented agent falls into loops and the guard
# catches each one. Extra arguments go to `cycleguard demo` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh cli
exec .venv/bin/cycleguard demo "$@"
