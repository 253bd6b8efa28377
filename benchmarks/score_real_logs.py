"""Score ``oomwizard diagnose`` on a labelled set of real logs kept outside the repository.

The labels are written before the tool is run on the logs, and the set is frozen by its hash; this
script only reads both and runs the tool, once per log, so the figures it prints cannot have been
tuned on. ``labels.json`` is a list of records::

    {"id": "001", "log": "logs/001.log", "issue": "owner/repo#N", "expected": "scenario-id" | null,
     "allowed": [...], "error_line": true, "non_oom": false, "ambiguous": false,
     "facts": {"vllm_version": "0.8.5", "tp": 2, "oom_requested": 543162368, ...}}

Rules (the same as the earlier rounds in ``real_logs.md``):

* top-1: the first match is the expected scenario or an allowed one; for a non-OOM or ambiguous
  log, right when no match reaches the confidence threshold (the wizard then asks); strict counts
  the expected scenario only (non-OOM and ambiguous logs: as top-1);
* top-3: the expected or an allowed scenario is among the first three (non-OOM: as top-1);
* leaf: the leaf of the non-interactive walk belongs to the expected or an allowed scenario;
  non-OOM logs: no leaf or the triage leaf; ambiguous logs: the triage leaf also counts;
* facts: each labelled fact has the labelled value, numbers within 0.2 %; ``oom_requested`` and
  ``oom_total`` are compared with every OOM message read, ``model`` by its last path part;
* calibration: of the logs whose first match scores >= 0.8 (and 0.5-0.8), how many are right
  (top-1); and the non-OOM logs with a claim of 0.5 or more;
* labelled scenario: the memory failures (ambiguous ones too) whose expected or allowed scenario
  comes first (with the error line) or among the first three (cut).

    python benchmarks/score_real_logs.py /path/labels.json /path/logs [--out DIR] [--per-log]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CONFIDENT = 0.5
HIGH = 0.8
TRIAGE = "oom-triage"
ROOT = Path(__file__).resolve().parent.parent


def diagnose(log: Path) -> dict:
    """The tool's JSON answer for one log (an empty answer when it fails)."""
    proc = subprocess.run([sys.executable, "-m", "oomwizard", "diagnose", str(log), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"matches": [], "facts": {}, "oom_messages": [], "leaf": None, "error": proc.stderr[-2000:]}


def _close(a, b) -> bool:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return abs(a - b) <= 0.002 * max(abs(a), abs(b), 1e-9)


def fact_ok(name: str, want, answer: dict) -> bool:
    """Whether the answer carries the labelled value of one fact."""
    if name in ("oom_requested", "oom_total"):
        key = name.split("_", 1)[1]
        return any(_close(m.get(key), want) for m in answer.get("oom_messages") or [])
    got = (answer.get("facts") or {}).get(name, {}).get("value")
    if got is None:
        return False
    if name == "model":
        base = lambda s: str(s).rstrip("/").rsplit("/", 1)[-1].lower()  # noqa: E731
        return base(got) == base(want)
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return _close(got, want)
    return str(got).lower() == str(want).lower()


def score(label: dict, answer: dict) -> dict:
    """The per-log verdicts of the rules above."""
    matches = answer.get("matches") or []
    ids = [m["scenario"] for m in matches]
    top = matches[0]["score"] if matches else 0.0
    confident = top >= CONFIDENT
    ok_ids = {label["expected"], *label.get("allowed", [])} - {None}
    asks = label["non_oom"] or label.get("ambiguous")
    leaf = answer.get("leaf") or {}
    leaf_scen = set(leaf.get("scenarios") or [])
    if label["non_oom"]:
        top1 = strict = top3 = not confident
        leaf_ok = not leaf or leaf.get("id") == TRIAGE
    else:
        if asks:
            top1 = strict = not confident
        else:
            top1 = bool(ids) and ids[0] in ok_ids
            strict = bool(ids) and ids[0] == label["expected"]
        top3 = bool(ok_ids & set(ids[:3])) or (asks and not confident)
        leaf_ok = bool(leaf_scen & ok_ids) or (asks and leaf.get("id") == TRIAGE)
    facts = {k: fact_ok(k, v, answer) for k, v in (label.get("facts") or {}).items()}
    return dict(top1=top1, strict=strict, top3=top3, leaf=leaf_ok, facts=facts, first=ids[0] if ids else None,
                score=top, leaf_id=leaf.get("id"), ids=ids[:3])


def table(rows: list[tuple[dict, dict]]) -> list[str]:
    """The summary lines: the three groups, calibration, confident claims on non-OOM logs."""
    out = ["| logs | n | top-1 | strict | top-3 | leaf | facts |", "| --- | --- | --- | --- | --- | --- | --- |"]
    groups = [("with error line", [r for r in rows if r[0]["error_line"]]),
              ("cut", [r for r in rows if not r[0]["error_line"]]), ("all", rows)]
    for name, grp in groups:
        n = len(grp)
        cnt = {k: sum(s[k] for _, s in grp) for k in ("top1", "strict", "top3", "leaf")}
        f_ok = sum(sum(s["facts"].values()) for _, s in grp)
        f_n = sum(len(s["facts"]) for _, s in grp)
        pct = f" ({100 * cnt['top1'] / n:.0f} %)" if n else ""
        out.append(f"| {name} | {n} | {cnt['top1']}{pct} | {cnt['strict']} | {cnt['top3']} | {cnt['leaf']} "
                   f"| {f_ok} of {f_n} |")
    out.append("")
    for lo, hi in ((HIGH, 9.0), (CONFIDENT, HIGH)):
        band = [(lab, s) for lab, s in rows if lo <= s["score"] < hi]
        right = sum(s["top1"] and not lab["non_oom"] and not lab.get("ambiguous") for lab, s in band)
        out.append(f"calibration: top score {lo}-{'' if hi > 1 else hi}: {right} right of {len(band)}")
    claims = [(lab, s) for lab, s in rows if lab["non_oom"] and s["score"] >= CONFIDENT]
    out.append(f"non-OOM logs with a confident claim (>= {CONFIDENT}): {len(claims)} of "
               f"{sum(lab['non_oom'] for lab, _ in rows)}"
               + "".join(f"\n  {lab['issue']}: {s['first']} {s['score']}" for lab, s in claims))
    # The labelled scenario itself, ambiguous logs included (their label is the labeller's best
    # reading): a second view of the same answers, next to the rules above.
    mem = [(lab, s) for lab, s in rows if not lab["non_oom"]]
    for name, grp, k in (("memory failures with error line, top-1", [r for r in mem if r[0]["error_line"]], 1),
                         ("memory failures cut, top-3", [r for r in mem if not r[0]["error_line"]], 3)):
        hit = sum(bool({lab["expected"], *lab.get("allowed", [])} & set(s["ids"][:k])) for lab, s in grp)
        out.append(f"labelled scenario, {name}: {hit} of {len(grp)}")
    amb = [(lab, s) for lab, s in rows if lab.get("ambiguous") and s["score"] >= CONFIDENT]
    out.append(f"ambiguous logs with a confident claim: {len(amb)} of {sum(bool(lab.get('ambiguous')) for lab, _ in rows)}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("labels", type=Path)
    ap.add_argument("logs", type=Path, help="the folder the labels' log paths are relative to")
    ap.add_argument("--out", type=Path, help="keep each JSON answer here (outside the repository)")
    ap.add_argument("--per-log", action="store_true", help="print one line per log")
    args = ap.parse_args(argv)
    labels = json.loads(args.labels.read_text())
    rows = []
    for lab in labels:
        log = args.logs / Path(lab["log"]).name
        answer = diagnose(log)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{lab['id']}.json").write_text(json.dumps(answer, indent=1, ensure_ascii=False))
        rows.append((lab, score(lab, answer)))
    if args.per_log:
        for lab, s in rows:
            miss = [k for k, v in s["facts"].items() if not v]
            print(f"{lab['id']} {lab['issue']:<48} want={lab['expected'] or 'none'}{' (amb)' if lab.get('ambiguous') else ''}"
                  f"{'' if lab['error_line'] else ' (cut)'} got={s['first']} {s['score']:.2f} leaf={s['leaf_id']} "
                  f"top1={'ok' if s['top1'] else 'MISS'} leaf={'ok' if s['leaf'] else 'MISS'}"
                  + (f" facts_missed={miss}" if miss else ""))
        print()
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
