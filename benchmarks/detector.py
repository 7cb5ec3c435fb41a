"""Detector cost per tool call against a hashing floor, and memory of idle sessions.

Run: ``python benchmarks/detector.py`` (about 15 s). Everything is measured in this run:

1. median cost of ``SessionDetector.observe_tool_call`` per call on a realistic mixed sequence
   (seeded: grep/read/edit/bash/open/... with dict arguments of 100 B to 10 KB and string
   results of similar sizes, some calls repeated), and its ratio to the *floor*: canonical JSON
   (orjson, sorted keys: the library the detector uses) plus xxh3_64 of the same arguments and
   results, measured per call on the same sequence;
2. the same with 200-byte arguments and results;
3. memory held by 100,000 idle sessions that each saw 5 calls: the Python objects
   (tracemalloc) plus what the compiled core allocated on its own heap meanwhile (its session
   structs, call rings and tables, which tracemalloc does not see: counted by the core's
   allocator, ``_core.heap_bytes``). Idle means hibernated, as the guard keeps a session
   quiet past ``session_hibernate_after_s`` (default 60 s): its state packed until its next
   call. Beside it, for reference: the same sessions awake, and the same sessions held by a
   ``CycleGuard`` (its table and entries counted too) after its hibernation sweep.

Beside them, on the same calls in the same run: Hermes agent's tool-call guardrail
(``before_call`` + ``after_call``, hard stops on, one controller per session), fetched from the
package registry by ``benchmarks/hermes_reference.py``; it does far less (identical failures,
failures per tool, read-only repeats) and is the cost of a guard already shipping in an agent.

Targets (issue 18, the compiled core): <= 1.5 us per 200-byte call and <= 5x the floor;
<= 4 us per call on the mixed sequence; 100,000 idle sessions <= 60 MB.

Per-call samples use ``time.perf_counter_ns``; medians are reported raw (they include the
timer's own overhead, printed separately, for both the detector and the floor).
"""

from __future__ import annotations

import gc
import random
import statistics
import string
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
import xxhash
from hermes_reference import HERMES_VERSION, load_guardrail

from otel_cycleguard import _core
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ToolCall
from otel_cycleguard.guard import CycleGuard

SEED = 20240501
TOOLS = ("grep", "read", "edit", "bash", "open", "search", "write", "list", "job_status")
MIXED_CALLS = 4_000
SMALL_CALLS = 10_000
TARGET_NS = 1_500
TARGET_RATIO = 5.0
TARGET_MIXED_NS = 4_000
TARGET_MB = 60.0


def _text(rng: random.Random, size: int) -> str:
    words = []
    total = 0
    while total < size:
        word = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))
        if rng.random() < 0.08:
            word = str(rng.randint(0, 99_999))
        words.append(word)
        total += len(word) + 1
    lines = []
    for i in range(0, len(words), 12):
        lines.append(" ".join(words[i : i + 12]))
    return "\n".join(lines)[:size]


def _args(rng: random.Random, tool: str, size: int) -> dict:
    body = _text(rng, max(8, size - 40))
    if tool == "bash":
        return {"command": f"pytest -q tests/test_{rng.randint(0, 50)}.py", "env": {"note": body}}
    if tool == "edit":
        return {"path": f"src/mod{rng.randint(0, 30)}.py", "old_str": body[: len(body) // 2],
                "new_str": body[len(body) // 2 :]}  # fmt: skip
    if tool in ("grep", "search"):
        return {"pattern": body[:size], "path": "src", "flags": ["-n", "-r"]}
    return {"path": f"src/mod{rng.randint(0, 30)}.py", "content": body}


def make_sequence(n: int, small: bool, seed: int = SEED) -> list[ToolCall]:
    """Seeded mixed calls; about a fifth repeat one of the previous 8 calls exactly."""
    rng = random.Random(seed)
    calls: list[ToolCall] = []
    for i in range(n):
        if calls and rng.random() < 0.2:
            calls.append(calls[-rng.randint(1, min(8, len(calls)))])
            continue
        tool = rng.choice(TOOLS)
        size = 200 if small else int(10 ** rng.uniform(2, 4))  # 100 B .. 10 KB, log-uniform
        args = _args(rng, tool, size)
        result = _text(rng, 200 if small else int(10 ** rng.uniform(2, 4)))
        calls.append(
            ToolCall(tool, args, result, error=rng.random() < 0.05, start_s=i * 1.0, end_s=i + 0.5)
        )
    return calls


def _median(samples: list[int]) -> float:
    return float(statistics.median(samples))


def timer_overhead(rounds: int = 20_000) -> float:
    clock = time.perf_counter_ns
    samples = []
    for _ in range(rounds):
        t0 = clock()
        samples.append(clock() - t0)
    return _median(samples)


def floor_samples(calls: list[ToolCall]) -> list[int]:
    """Canonical JSON (orjson, sorted keys) + xxh3_64 of arguments and of results, per call."""
    dumps, opt, h = orjson.dumps, orjson.OPT_SORT_KEYS, xxhash.xxh3_64_intdigest
    clock = time.perf_counter_ns
    out = []
    for c in calls:
        t0 = clock()
        h(dumps(c.arguments, option=opt))
        h(dumps(c.result, option=opt))
        out.append(clock() - t0)
    return out


def detector_samples(calls: list[ToolCall], sessions: int = 20) -> list[int]:
    """observe_tool_call per call; the sequence is split across a few sessions round-robin."""
    det = Detector(CycleGuardConfig())
    live = [det.session(f"s{i}") for i in range(sessions)]
    clock = time.perf_counter_ns
    out = []
    for i, c in enumerate(calls):
        s = live[i % sessions] if i % 50 else live[0]
        t0 = clock()
        s.observe_tool_call(c)
        out.append(clock() - t0)
    return out


def hermes_samples(guardrail: tuple, calls: list[ToolCall], sessions: int = 20) -> list[int]:
    """Hermes's ``before_call`` + ``after_call`` per call, sessions as in detector_samples."""
    controller, config = guardrail
    live = [controller(config(hard_stop_enabled=True)) for _ in range(sessions)]
    texts = [
        c.result if isinstance(c.result, str) else orjson.dumps(c.result).decode() for c in calls
    ]
    clock = time.perf_counter_ns
    out = []
    for i, c in enumerate(calls):
        g = live[i % sessions] if i % 50 else live[0]
        t0 = clock()
        g.before_call(c.tool, c.arguments)
        g.after_call(c.tool, c.arguments, texts[i], failed=c.error)
        out.append(clock() - t0)
    return out


def measure(
    calls: list[ToolCall], guardrail: tuple | None, repeats: int = 3
) -> tuple[float, float, float | None]:
    """(detector, floor, Hermes guardrail or None) median ns: interleaved runs, best median
    of each."""
    det, flo, ref = [], [], []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            flo.append(_median(floor_samples(calls)))
            det.append(_median(detector_samples(calls)))
            if guardrail is not None:
                ref.append(_median(hermes_samples(guardrail, calls)))
        finally:
            gc.enable()
    return min(det), min(flo), (min(ref) if ref else None)


IDLE_SESSIONS = 100_000
CALLS_EACH = 5


def _idle_call_pool() -> list[ToolCall]:
    # Small calls of the usual tools (what a session holds does not depend on call size).
    return [
        ToolCall(t, {"path": f"src/m{i}.py", "q": i}, f"result {i}", error=i % 7 == 0)
        for i, t in enumerate(TOOLS * 7)
    ]


def _held(build: Callable[[], object]) -> tuple[float, int, float]:
    """MB held by what ``build`` returns (traced Python objects and the core's own heap,
    after gc), bytes per idle session, and the core heap's part in MB."""
    gc.collect()
    gc.disable()  # full collections over millions of live objects would dominate the run
    tracemalloc.start()
    _core.heap_counting(True)
    before = tracemalloc.get_traced_memory()[0]
    heap_before = _core.heap_bytes()
    kept = build()
    gc.enable()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    heap = _core.heap_bytes() - heap_before
    _core.heap_counting(False)
    tracemalloc.stop()
    held = after - before + heap
    del kept
    return held / 1e6, held // IDLE_SESSIONS, heap / 1e6


def idle_sessions_memory(*, hibernate: bool) -> tuple[float, int, float]:
    """Sessions made by the detector, ``CALLS_EACH`` calls each, kept in a dict by key;
    hibernated as the guard does once they are quiet, or left awake."""
    rng = random.Random(SEED + 1)
    pool = _idle_call_pool()
    det = Detector(CycleGuardConfig())
    det.session("warm").observe_tool_call(pool[0])  # caches and lazy imports outside the trace

    def build() -> dict[str, object]:
        sessions = {}
        for i in range(IDLE_SESSIONS):
            key = f"session-{i:08d}"
            s = det.session(key, agent="bench")
            for _ in range(CALLS_EACH):
                s.observe_tool_call(pool[rng.randrange(len(pool))])
            if hibernate:
                s.hibernate()
            sessions[key] = s
        return sessions

    return _held(build)


def guard_idle_sessions_memory() -> tuple[float, int, float]:
    """The same sessions fed through a ``CycleGuard`` (a clock of its own), which then goes
    past ``session_hibernate_after_s`` and sweeps: its table and entries are counted too."""
    rng = random.Random(SEED + 1)
    pool = _idle_call_pool()
    now = [0.0]
    config = CycleGuardConfig(max_sessions=2 * IDLE_SESSIONS)
    guard = CycleGuard(config, clock=lambda: now[0])
    guard.observe_tool_call("warm", pool[0])

    def build() -> CycleGuard:
        for i in range(IDLE_SESSIONS):
            key = f"session-{i:08d}"
            for _ in range(CALLS_EACH):
                guard.observe_tool_call(key, pool[rng.randrange(len(pool))], agent="bench")
        now[0] += (config.session_hibernate_after_s or 0.0) + 1.0
        guard.expire_idle()
        assert guard.hibernated == IDLE_SESSIONS + 1
        return guard

    return _held(build)


def main() -> int:
    started = time.perf_counter()
    overhead = timer_overhead()
    mixed = make_sequence(MIXED_CALLS, small=False)
    small = make_sequence(SMALL_CALLS, small=True, seed=SEED + 7)
    for c in mixed[:500] + small[:500]:  # warm-up: caches, regex, branch predictors
        Detector(CycleGuardConfig()).session("w").observe_tool_call(c)
    loaded = load_guardrail()
    guardrail = loaded if isinstance(loaded, tuple) else None
    mixed_det, mixed_floor, mixed_ref = measure(mixed, guardrail)
    small_det, small_floor, small_ref = measure(small, guardrail)
    timed = time.perf_counter()
    mem_mb, per_session, heap_mb = idle_sessions_memory(hibernate=True)
    awake_mb, awake_per_session, _ = idle_sessions_memory(hibernate=False)
    guard_mb, guard_per_session, _ = guard_idle_sessions_memory()
    mem_s = time.perf_counter() - timed

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "MISS"

    arg_bytes = statistics.median(len(orjson.dumps(c.arguments)) for c in mixed)
    print(f"python {sys.version.split()[0]}, orjson {orjson.__version__}, xxhash {xxhash.VERSION}")
    print(f"timer overhead per sample (median): {overhead:.0f} ns (included in every figure)")
    print(
        f"mixed sequence: {MIXED_CALLS:,} calls (median argument size {arg_bytes:.0f} B); "
        f"200 B sequence: {SMALL_CALLS:,} calls; best median of 3 interleaved runs\n"
    )
    if guardrail is None:
        print(f"reference left out: {loaded}")
    else:
        print(
            f"reference: hermes-agent {HERMES_VERSION} ToolCallGuardrailController, hard stops on"
        )

    def hermes(ref: float | None, det: float) -> tuple[str, str]:
        if ref is None:
            return "-", "-"
        return f"{ref / 1000:.2f} us", f"{det / ref:.2f}x"

    rows = [
        ("workload", "detector", "floor", "ratio", "hermes", "vs hermes", "target", "verdict"),
        (
            "mixed 100 B..10 KB",
            f"{mixed_det / 1000:.2f} us",
            f"{mixed_floor / 1000:.2f} us",
            f"{mixed_det / mixed_floor:.2f}x",
            *hermes(mixed_ref, mixed_det),
            f"<= {TARGET_MIXED_NS / 1000:.0f} us",
            verdict(mixed_det <= TARGET_MIXED_NS),
        ),
        (
            "200 B args/results",
            f"{small_det / 1000:.2f} us",
            f"{small_floor / 1000:.2f} us",
            f"{small_det / small_floor:.2f}x",
            *hermes(small_ref, small_det),
            f"<= {TARGET_NS / 1000:.1f} us, <= {TARGET_RATIO:.0f}x",
            f"{verdict(small_det <= TARGET_NS)} / {verdict(small_det / small_floor <= TARGET_RATIO)}",
        ),
        (
            "100,000 idle sessions",
            f"{mem_mb:.1f} MB",
            f"{per_session} B/session",
            "",
            "",
            "",
            f"<= {TARGET_MB:.0f} MB",
            verdict(mem_mb <= TARGET_MB),
        ),
        ("  the same, awake", f"{awake_mb:.1f} MB", f"{awake_per_session} B/session"),
        ("  in a CycleGuard", f"{guard_mb:.1f} MB", f"{guard_per_session} B/session"),
    ]
    rows = [row + ("",) * (len(rows[0]) - len(row)) for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print(
        f"\nidle sessions (hibernated): {mem_mb - heap_mb:.1f} MB of Python objects "
        f"(tracemalloc), {heap_mb:.1f} MB of the core's own heap"
    )
    print(f"total time {time.perf_counter() - started:.1f} s (memory part {mem_s:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
