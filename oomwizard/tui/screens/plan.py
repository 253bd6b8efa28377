"""The plan screen: change a setting, watch the budget bar and vLLM's verdict move.

Opened from a capacity leaf when the facts name a model the planner can describe and a GPU size.
Every keystroke re-plans with the same arithmetic as ``oomwizard plan`` (and the same log figures).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Input, Select, Static

from ...i18n import msg
from ...plan.errors import PlanError
from ...plan.inputs import Inputs
from ...plan.planner import Plan, plan
from ...plan.sources import load_model
from ...text.units import GIB
from ..widgets.footer import WizardFooter
from .base import WizardModal

BAR = 56
CAPACITY_LEAVES = frozenset({"kv-cache-too-small", "no-kv-cache-memory", "weights-load-oom",
                             "insufficient-free-memory-at-startup", "runtime-oom", "sampler-warmup",
                             "profile-run-oom", "cudagraph-capture"})

T = {
    "title": msg("tui.plan.title"),
    "len": msg("tui.plan.len"),
    "util": msg("tui.plan.util"),
    "tp": msg("tui.plan.tp"),
    "legend": msg("tui.plan.legend"),
    "fits": msg("tui.plan.fits"),
    "fails": msg("tui.plan.fails"),
    "bad": msg("tui.plan.bad"),
}


def inputs_from_facts(facts: Any) -> Inputs | None:
    """A plan's inputs from what the wizard knows (log and machine facts), or ``None``."""
    model = facts.value("model")
    total = facts.value("gpu_mem_total_bytes")
    if not isinstance(model, str) or not isinstance(total, (int, float)) or total <= 0:
        return None
    from ...plan.command import LOG_KEYS

    log = {k: facts.value(k) for k in LOG_KEYS if facts.value(k) is not None}
    return Inputs(model=model, gpu_memory_gib=total / GIB, tp=int(facts.value("tp") or 1),
                  pp=int(facts.value("pp") or 1), max_model_len=facts.value("max_model_len"),
                  gpu_memory_utilization=facts.value("gpu_memory_utilization"),
                  kv_cache_dtype=str(facts.value("kv_cache_dtype") or "auto"),
                  vllm_version=facts.value("vllm_version"), log_facts=log, log_name="the log")


def bar(p: Plan, width: int = BAR) -> str:
    """The GPU as ``width`` cells: what vLLM's budget spends it on, and what it leaves outside."""
    total = p.gpu["total_bytes"]
    parts = [("W", p.value("weights_bytes_per_gpu")), ("A", p.value("activation_peak_bytes")),
             ("N", p.value("non_torch_bytes")),
             ("G", p.value("cudagraph_bytes") if p.numbers["cudagraph_bytes"].get("counted") else 0),
             ("K", max(0, p.value("available_kv_bytes")))]
    cells, used = [], 0
    for mark, size in parts:
        n = min(width - used, round(width * max(0, size) / total))
        cells.append(mark * n)
        used += n
    return "".join(cells) + "." * (width - used)


class PlanScreen(WizardModal):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "tui.back", id="plan.close")]
    DEFAULT_CSS = """
    PlanScreen { align: center middle; }
    #plan-box { width: 80; height: auto; max-height: 24; border: round $accent; padding: 0 1; background: $surface; }
    #plan-fields { height: auto; }
    #plan-fields Input { width: 1fr; }
    #plan-fields Select { width: 16; }
    #plan-bar { margin-top: 1; }
    #plan-verdict { margin-top: 1; }
    """

    def __init__(self, inputs: Inputs) -> None:
        super().__init__()
        self.inputs = inputs
        self.model = load_model(inputs.model)
        self.result: Plan | None = None

    def _t(self, key: str, **fmt: object) -> str:
        return T[key](self.wizard.lang).format(**fmt)

    def compose(self) -> ComposeResult:
        first = plan(self.inputs, model=self.model)
        s = first.settings
        with Vertical(id="plan-box"):
            yield Static(Content.assemble((self._t("title", model=self.model.name, ver=first.release.text,
                                                   gpu=first.gpu["total_bytes"] / GIB), "bold")), id="plan-title")
            with Horizontal(id="plan-fields"):
                yield Input(str(s["max_model_len"]), placeholder=self._t("len"), id="plan-len", type="integer")
                yield Input(str(s["gpu_memory_utilization"]), placeholder=self._t("util"), id="plan-util", type="number")
                yield Input(str(s["tp"]), placeholder=self._t("tp"), id="plan-tp", type="integer")
                yield Select([("auto", "auto"), ("fp8", "fp8")], value="fp8" if s["kv_cache_dtype"] != "auto" else "auto",
                             allow_blank=False, id="plan-kv")
            yield Static("", id="plan-bar")
            yield Static(Content(self._t("legend")), id="plan-legend")
            yield Static("", id="plan-verdict")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.replan()
        super().on_mount()

    @on(Input.Changed)
    @on(Select.Changed)
    def _changed(self) -> None:
        self.replan()

    def _read(self) -> Inputs | str:
        fields = {"max_model_len": ("#plan-len", int), "gpu_memory_utilization": ("#plan-util", float),
                  "tp": ("#plan-tp", int)}
        changes: dict[str, Any] = {}
        for name, (sel, kind) in fields.items():
            raw = self.query_one(sel, Input).value.strip()
            try:
                changes[name] = kind(raw)
            except ValueError:
                return self._t("bad", field=name)
        kv = self.query_one("#plan-kv", Select).value
        changes["kv_cache_dtype"] = str(kv) if kv in ("auto", "fp8") else "auto"
        if not (0 < changes["gpu_memory_utilization"] <= 1) or changes["max_model_len"] < 1 or changes["tp"] < 1:
            return self._t("bad", field="range")
        return self.inputs.but(**changes)

    def replan(self) -> None:
        """Plan the settings on screen and redraw the bar and the verdict."""
        got = self._read()
        verdict = self.query_one("#plan-verdict", Static)
        if isinstance(got, str):
            verdict.update(Content(got))
            return
        try:
            self.result = p = plan(got, model=self.model)
        except PlanError as e:
            self.result = None
            verdict.update(Content(e.text(self.wizard.lang)))
            return
        self.query_one("#plan-bar", Static).update(Content(bar(p)))
        if p.fits:
            text = self._t("fits", tokens=p.value("kv_tokens"), conc=p.value("max_concurrency"))
        else:
            text = self._t("fails", error=p.error)
        verdict.update(Content(text))

    def action_close(self) -> None:
        self.dismiss(None)
