"""Tiny harness: feed scripted runs to otel-cycleguard's Detector, simulating the ladder
(first TERM of a dimension = self-heal -> session.reset(dim); second TERM = would terminate)."""

from __future__ import annotations

from dataclasses import dataclass, field

from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.detect import Detector, ModelTurn, ToolCall
from otel_cycleguard.detect.signals import Level


@dataclass
class Run:
    name: str
    shape: str
    label: str  # "loop-free" or "loop"
    loop_start: int | None  # tool-call step where the loop begins (0-based)
    events: list = field(default_factory=list)
    clock: float = 1_700_000_000.0

    def call(self, tool, args, result, error=False, dur=0.8, read_only=None):
        self.clock += 2.0
        self.events.append(
            ToolCall(
                tool,
                args,
                result,
                error=error,
                start_s=self.clock,
                end_s=self.clock + dur,
                read_only=read_only,
            )
        )
        self.clock += dur

    def turn(self, text, err=False, err_text=None):
        self.clock += 3.0
        self.events.append(
            ModelTurn(
                text=text,
                input_tokens=1500,
                output_tokens=120,
                start_s=self.clock,
                end_s=self.clock + 2.5,
                error=err,
                error_text=err_text,
            )
        )

    @property
    def ncalls(self):
        return sum(isinstance(e, ToolCall) for e in self.events)


def play(run: Run, profile="general"):
    s = Detector(CycleGuardConfig(profile=profile)).session(run.name)
    sigs, terms_by_dim = [], {}
    for ev in run.events:
        out = s.observe_tool_call(ev) if isinstance(ev, ToolCall) else s.observe_model_turn(ev)
        for sig in out:
            rec = dict(
                step=sig.step,
                turn=sig.model_turn_index,
                level=sig.level.value,
                dim=sig.dimension.value,
                rule=sig.rule,
                tool=sig.tool,
                streak=sig.streak,
                thr=sig.threshold,
                msg=sig.explanation,
            )
            if sig.level is Level.TERM:
                n = terms_by_dim.get(sig.dimension, 0) + 1
                terms_by_dim[sig.dimension] = n
                rec["ladder"] = "self-heal(reset)" if n == 1 else "2nd TERM -> terminate"
                s.reset(sig.dimension)
            sigs.append(rec)
    return sigs, terms_by_dim


def report(runs, profile="general", verbose=True):
    rows = []
    for r in runs:
        sigs, tb = play(r, profile)
        terms = [x for x in sigs if x["level"] == "term"]
        first = terms[0] if terms else None
        second = any(v >= 2 for v in tb.values())
        if r.label == "loop-free":
            verdict = "FALSE TERM" if terms else "ok"
        else:
            if not terms:
                verdict = "MISSED"
            elif first["step"] is not None and first["step"] < r.loop_start:
                verdict = "TERM before loop start"
            else:
                verdict = "caught"
        rows.append((r, sigs, terms, first, second, verdict))
        if verbose:
            print(
                f"\n=== {r.name} [{r.shape}] label={r.label} loop_start={r.loop_start} calls={r.ncalls}"
            )
            for x in sigs:
                print(
                    f"  step={x['step']} turn={x['turn']} {x['level'].upper():4} {x['dim']}/{x['rule']} "
                    f"tool={x['tool']} streak={x['streak']}/{x['thr']} {x.get('ladder', '')}"
                )
                print(f"      {x['msg'][:220]}")
            print(
                f"  -> verdict: {verdict}; first TERM step={first['step'] if first else None}"
                f" ({first['rule'] if first else '-'}); 2nd TERM same dim: {second}"
            )
    print(f"\n\nSUMMARY (profile={profile})")
    print(f"{'run':38} {'label':9} {'start':5} {'calls':5} {'1st TERM':24} {'2nd':4} verdict")
    for r, _sigs, _terms, first, second, verdict in rows:
        ft = f"{first['step']}:{first['rule']}" if first else "-"
        print(
            f"{r.name:38} {r.label:9} {r.loop_start!s:5} {r.ncalls:<5} {ft:24} {'yes' if second else 'no':4} {verdict}"
        )
    return rows
