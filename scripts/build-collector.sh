#!/usr/bin/env bash
# Build the pinned OpenTelemetry Collector (collector/manifest.yaml) with the official
# Collector Builder (ocb), once: the binary is cached OUTSIDE the work tree, keyed by the
# manifest's hash, so every clone on this machine (and CI) reuses it.
#
#   scripts/build-collector.sh          build if needed, print the binary's path
#   scripts/build-collector.sh --path   only print where the binary is (or would be)
#
# Exit codes: 0 the binary is there (path on stdout), 3 no Go toolchain to build it with.
# The cache is ${CYCLEGUARD_COLLECTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-cycleguard}.
# tests/service/collector.py computes the same path (keep the two in step).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MANIFEST="$ROOT/collector/manifest.yaml"
VERSION="$(sed -n 's/^  version: *//p' "$MANIFEST" | head -1)"
HASH="$(sha256sum "$MANIFEST" | cut -c1-12)"
CACHE="${CYCLEGUARD_COLLECTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-cycleguard}"
DIR="$CACHE/otelcol-$VERSION-$HASH"
BIN="$DIR/otelcol-cycleguard"

if [ "${1:-}" = "--path" ]; then
    echo "$BIN"
    exit 0
fi
if [ -x "$BIN" ]; then
    echo "$BIN"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "build-collector: no Go toolchain on PATH: cannot build the Collector ($BIN is not cached)" >&2
    exit 3
fi

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9  # two test runs at once build it once
if [ -x "$BIN" ]; then
    echo "$BIN"
    exit 0
fi
started=$(date +%s)
echo "build-collector: building otelcol-cycleguard $VERSION into $DIR (several minutes, once)" >&2
export GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0
GOBIN="$DIR/tools" nice -n 10 go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION" >&2
rm -rf "$DIR/build"
mkdir -p "$DIR/build"
cp "$MANIFEST" "$DIR/build/manifest.yaml"
(cd "$DIR/build" && nice -n 10 "$DIR/tools/builder" --config manifest.yaml >&2)
"$DIR/build/otelcol-cycleguard/otelcol-cycleguard" --version >&2
mv "$DIR/build/otelcol-cycleguard/otelcol-cycleguard" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
rm -rf "$DIR/build"
echo "build-collector: built in $(( $(date +%s) - started )) s" >&2
echo "$BIN"
