"""The ``cycleguard`` command: one small function per subcommand, built on argparse subparsers.

Exit codes: 0 success; 1 the command found what it was asked to fail on (``analyze
--fail-on-loop``); 2 usage errors and unusable input, with a one-line message on stderr.
To add a subcommand, write ``_add_<name>(subparsers)`` that registers its parser with
``set_defaults(func=...)`` and list it in :data:`_SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = ["EXIT_FOUND", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
PROG = "cycleguard"

_MAX_SKIP_MESSAGES = 20
_PROGRESS_DELAY_S = 1.5


class CommandError(Exception):
    """A usage or input problem: printed as ``cycleguard <cmd>: error: ...``, exit 2."""


# -- analyze --------------------------------------------------------------------------------

_ANALYZE_DESCRIPTION = """\
Replay exported traces through the same detection engine and escalation ladder as the live
plugin, and report the loops it would have caught: per session, the signals (WARN/TERM per
dimension), the escalations (self-heal, human, terminate), where the run would have been
stopped, and what it spent after the first TERM.

Input: OTLP JSON documents, OTLP JSON lines (the Collector file exporter), Jaeger JSON, and
Grafana Tempo JSON; files, directories (walked recursively), or - for stdin; gzip is detected
by content. Invalid lines are skipped with their line number and counted in the summary.
"""

_ANALYZE_EPILOG = """\
examples:
  cycleguard analyze traces.jsonl.gz
  cycleguard analyze exports/ --profile coding --format markdown -o incident.md
  cycleguard analyze jaeger-trace.json --set identical_call.term=4 --hitl continue
  cycleguard analyze run.json --format html -o timeline.html
  cycleguard analyze traces/ --format json --fail-on-loop   # CI: exit 1 on any TERM
  cycleguard analyze big-export.jsonl.gz --jobs auto        # one process per CPU, same report

--hitl: how the simulated human answers when a dimension reaches its second TERM.
  timeout   nobody answers; the run is terminated there (fail-closed, the default)
  continue  the human says continue; the dimension is reset and the run goes on

exit codes: 0 done; 1 a loop reached TERM and --fail-on-loop was given;
            2 usage error, bad configuration, unknown input, or nothing readable at all
            (skipped input is listed on stderr, one line each; the rest is reported)
"""


def _add_analyze(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="replay exported traces and report the loops found",
        description=_ANALYZE_DESCRIPTION,
        epilog=_ANALYZE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="trace file, directory, or - for stdin"
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="configuration file (YAML/JSON/TOML); "
        "default: $CYCLEGUARD_CONFIG, else built-in defaults",
    )
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="default profile for sessions: general (default), coding, subagent, or one "
        "defined in the config (child agents still use the subagent profile)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="DIMENSION.FIELD=VALUE",
        help="override a threshold of the selected profile, e.g. identical_call.warn=4 "
        "(repeatable)",
    )
    parser.add_argument(
        "--hitl",
        choices=("timeout", "continue"),
        default="timeout",
        help="simulated human at the HITL step (default: timeout)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown", "html"),
        default="text",
        help="report format (default: text, a terminal summary)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    parser.add_argument(
        "--fail-on-loop",
        action="store_true",
        help="exit 1 when any session reached TERM in any dimension",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress line on stderr for inputs that take more than a second or two "
        "(default: only when stderr is a terminal)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="replay with N processes, each reading the whole input and replaying a share of "
        "the sessions (same report; about 1.5x faster with 2 on large inputs on 2 cores, N times the "
        "memory); 'auto': one per CPU; default 1. Standard input is always read by one",
    )
    parser.set_defaults(func=_run_analyze)


def _jobs(value: str) -> int:
    if value == "auto":
        return os.cpu_count() or 1
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 or 'auto', got {value!r}")
    return jobs


def _run_analyze(args: argparse.Namespace) -> int:
    from concurrent.futures.process import BrokenProcessPool

    from otel_cycleguard.analyze.problems import InputError
    from otel_cycleguard.analyze.replay import analyze_paths
    from otel_cycleguard.config import ConfigError, load_config

    try:
        config = load_config(args.config)
        if args.profile or args.overrides:
            config = config.with_overrides(
                ([f"profile={args.profile}"] if args.profile else []) + list(args.overrides),
                profile=args.profile,
            )
    except ConfigError as exc:
        raise CommandError(str(exc)) from exc
    except OSError as exc:
        raise CommandError(f"{args.config}: {exc.strerror or exc}") from exc
    if args.jobs > 1 and "-" in args.paths:
        print(
            f"{PROG}: standard input can be read only once: replaying with one process",
            file=sys.stderr,
        )
    show_progress = args.progress if args.progress is not None else sys.stderr.isatty()
    progress = _Progress(sys.stderr) if show_progress else None
    skips = _SkipPrinter(sys.stderr)
    try:
        analysis = analyze_paths(
            args.paths,
            config,
            hitl=args.hitl,
            keep_steps=args.format == "html",
            on_skip=skips,
            on_progress=progress,
            jobs=args.jobs,
        )
    except InputError as exc:
        raise CommandError(str(exc)) from exc
    except BrokenProcessPool as exc:
        raise CommandError(
            f"a --jobs worker process stopped before it finished ({exc}); the likeliest cause "
            "is memory (each process buffers its own spans): retry with fewer --jobs"
        ) from exc
    finally:
        if progress is not None:
            progress.close()
    skips.close()
    if not analysis.formats:  # not one trace document: a report of nothing would look clean
        if skips.count:
            raise CommandError(
                f"nothing readable: every input was skipped ({skips.count} listed above)"
            )
        raise CommandError(f"no trace files found in {', '.join(args.paths)}")
    try:
        _write_report(analysis, args.format, args.output)
    except OSError as exc:
        raise CommandError(f"{args.output}: {exc.strerror or exc}") from exc
    if args.fail_on_loop and analysis.has_loops:
        return EXIT_FOUND
    return EXIT_OK


def _write_report(analysis: Any, fmt: str, output: str | None) -> None:
    if fmt == "text":
        from otel_cycleguard.analyze.report_text import render_text

        if output is None:
            render_text(analysis, sys.stdout)
        else:
            with open(output, "w", encoding="utf-8") as handle:
                render_text(analysis, handle)
        return
    if fmt == "json":
        text = analysis.to_json()
    elif fmt == "markdown":
        from otel_cycleguard.analyze.report_markdown import render_markdown

        text = render_markdown(analysis)
    else:
        from otel_cycleguard.analyze.report_html import render_html

        text = render_html(analysis)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)


class _SkipPrinter:
    """Prints skipped input to stderr, the first few in full, then a count."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.count = 0

    def __call__(self, problem: Any) -> None:
        self.count += 1
        if self.count <= _MAX_SKIP_MESSAGES:
            print(f"{PROG}: skipped {problem}", file=self.stream)

    def close(self) -> None:
        if self.count > _MAX_SKIP_MESSAGES:
            print(
                f"{PROG}: ... {self.count - _MAX_SKIP_MESSAGES} more skipped "
                f"({self.count} in all, counted in the report summary)",
                file=self.stream,
            )


class _Progress:
    """A progress line on stderr, started only once the input has taken a while.

    Standard library only (the core install has no progress-bar library): on a terminal one
    line rewritten in place and cleared at the end; elsewhere (``--progress`` into a file) a
    line every few seconds.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self._shown_at = 0.0
        self._shown = False
        try:
            self._tty = stream.isatty()
        except (AttributeError, ValueError):
            self._tty = False

    def __call__(self, spans: int, sessions: int) -> None:
        now = time.monotonic()
        if now - self.started < _PROGRESS_DELAY_S:
            return
        if self._shown and now - self._shown_at < (0.1 if self._tty else 5.0):
            return
        self._shown_at = now
        self._shown = True
        text = f"analyzing: {spans:,} spans, {sessions:,} sessions, {now - self.started:.0f} s"
        self.stream.write(f"\r{text}\x1b[K" if self._tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._shown and self._tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


# -- the command ----------------------------------------------------------------------------


def _add_demo(subparsers: Any) -> None:
    from otel_cycleguard import demo

    parser = subparsers.add_parser(
        "demo",
        help="watch scripted agents fall into loops and the guard catch each one",
    )
    demo.build_parser(parser)
    parser.set_defaults(func=lambda args: demo.main_with(args))


def _add_serve(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="receive OTLP (HTTP and gRPC) from agents in any language and guard them",
        description="Run the guard as a service behind an OpenTelemetry Collector "
        "(see docs/service.md).",
    )
    try:
        from otel_cycleguard.service.cli import add_arguments, run
    except ModuleNotFoundError as exc:  # the service extra is missing
        missing = exc.name

        def unavailable(args: argparse.Namespace) -> int:
            raise CommandError(
                f"the service needs the 'service' extra ({missing} is not installed): "
                "pip install 'otel-cycleguard[service]'"
            )

        parser.set_defaults(func=unavailable)
        return
    add_arguments(parser)
    parser.set_defaults(func=run)


#: Module (or package prefix) of an optional dependency -> the extra that installs it.
_EXTRAS = (
    ("yaml", "yaml"),
    ("grpc", "service"),
    ("google.protobuf", "service"),
    ("opentelemetry.proto", "service"),
)


def _missing_extra(exc: ModuleNotFoundError) -> str:
    """What to install for a missing module, in one line."""
    name = exc.name or str(exc)
    for prefix, extra in _EXTRAS:
        if name == prefix or name.startswith(prefix + "."):
            return (
                f"this needs the '{extra}' extra ({name} is not installed): "
                f"pip install 'otel-cycleguard[{extra}]'"
            )
    return f"{name} is not installed (pip install {name.split('.')[0]})"


_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (_add_analyze, _add_demo, _add_serve)


def build_parser() -> argparse.ArgumentParser:
    """The ``cycleguard`` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="otel-cycleguard: catch AI agents stuck in loops, from their OpenTelemetry "
        "traces.",
        epilog=f"Run '{PROG} <command> --help' for a command's options and examples.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for add in _SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``cycleguard`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CommandError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as exc:  # an optional extra is missing: one line, no traceback
        print(f"{PROG} {args.command}: error: {_missing_extra(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
