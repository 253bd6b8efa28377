"""The typed diagnosis rules: what :mod:`.rules` builds from ``decision_trees/diagnosis/*.yaml``.

Kept apart from the loading so the collector and the ranking can name the types without the
loader, and the loader's sections stay small.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..i18n import Text
from .message_facts import MessageFact
from .refine_rules import Refinements

__all__ = ["SLEEP_STATES", "Example", "FrameFlag", "FramePhase", "Rules", "Signature"]

SLEEP_STATES = ("asleep", "awake")


@dataclass(frozen=True)
class Signature:
    """A message whose words identify a scenario."""

    id: str
    triggers: tuple[str, ...]
    """Plain substrings; a line holding none of them is never tried against the regex."""
    pattern: re.Pattern[str]
    scenario: str
    score: float
    reason: Text
    """Shown to the operator; ``{name}`` is filled from the regex's named groups."""
    phase: str | None = None
    facts: tuple[MessageFact, ...] = ()
    """The facts its named groups carry (``message_facts``; converted to the fact's type by the caller)."""
    oom: bool = False
    """The message reports a GPU out-of-memory error (so phase and context apply)."""
    frames: re.Pattern[str] | None = None
    """When set, the message counts only at the end of a traceback with a frame (path or
    function) matching this: a bare CUDA error says nothing without the code that raised it."""
    by_phase: bool = False
    """The message only names its phase (a report's own words): the phase's scenarios are ranked
    as for frames, with their refinements, at the message's score."""
    fallback: bool = False
    """Read only on a line no other message rule matches (the most general words of a report)."""
    prose: bool = False
    """Read only on a line that reads as words (:func:`~.errors.reads_as_words`): a report's own
    sentence, which the text found in binary data must not pass for."""
    also: tuple[str, ...] = ()
    """Lower-case substrings of which the line must also hold one (any case) before the regex is
    tried: the second half of a rule that needs two kinds of words."""

    @property
    def fact_groups(self) -> frozenset[str]:
        """The groups that carry a fact: a message missing one may find it on the next lines."""
        return frozenset(mf.group for mf in self.facts if not (mf.values and mf.default is not None))


@dataclass(frozen=True)
class FramePhase:
    phase: str
    funcs: frozenset[str]
    path: re.Pattern[str] | None = None
    func_re: re.Pattern[str] | None = None
    """For runners whose function names are not listed (model runner V2, plugins)."""
    ctor: re.Pattern[str] | None = None
    """A constructor (``__init__``) frame in a file matching this: building the model allocates
    its parameters, so an OOM there happens while the weights are being set up."""


@dataclass(frozen=True)
class FrameFlag:
    name: str
    func: re.Pattern[str] | None = None
    path: re.Pattern[str] | None = None
    code: re.Pattern[str] | None = None
    """Matched against the source lines a traceback shows under its frames."""


@dataclass(frozen=True)
class Example:
    rule: str
    scenario: str | None
    text: str
    file: str
    line: int


@dataclass
class Rules:
    tiers: dict[str, float] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)
    """Named regexes (``messages.yaml`` ``words:``) that any rule's pattern uses as ``{{@name}}``."""
    word_plain: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The plain words of those that have them (``@name`` in ``triggers`` and ``also``)."""
    word_lines: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Where each word with plain words is defined (file, line), for lint's problems."""
    messages: tuple[Signature, ...] = ()
    inferred: dict[str, Signature] = field(default_factory=dict)
    gpu_oom: re.Pattern[str] = re.compile(r"(?!)")
    gpu_oom_triggers: tuple[str, ...] = ()
    gpu_oom_facts: tuple[MessageFact, ...] = ()
    frame_phases: tuple[FramePhase, ...] = ()
    frame_flags: tuple[FrameFlag, ...] = ()
    flag_lines: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Where each frame flag is defined (file, line): a flag no refinement reads is reported there."""
    cut_phases: tuple[tuple[str, str, frozenset[str]], ...] = ()
    warmup_raisers: frozenset[str] = frozenset()
    engine_code: re.Pattern[str] | None = None
    forward_frames: tuple[re.Pattern[str], str] | None = None
    construction_frames: tuple[re.Pattern[str], frozenset[str]] | None = None
    """Frames of the engine's construction (file pattern, functions), which runs every start-up step."""
    """Frames of the model's own forward pass, and the first start-up phase that runs one."""
    timeline: tuple[tuple[str, re.Pattern[str] | None, str], ...] = ()
    request_layer_death: tuple[str, ...] = ()
    serving_loops: frozenset[str] = frozenset()
    serving_sources: tuple[str, ...] = ()
    sleep_marks: tuple[tuple[str, re.Pattern[str], str], ...] = ()
    sleep_partial_tags: tuple[str, ...] = ()
    run_start: re.Pattern[str] = re.compile(r"(?!)")
    run_start_triggers: tuple[str, ...] = ()
    mm_profile: re.Pattern[str] = re.compile(r"(?!)")
    mm_profile_triggers: tuple[str, ...] = ()
    thresholds: dict[str, float] = field(default_factory=dict)
    large_vocab: int = 0
    fragmentation_min: int = 0
    mrv2_zero: str = ""
    deepseek_v32: re.Pattern[str] = re.compile(r"(?!)")
    mechanisms: tuple[Any, ...] = ()
    refinements: Refinements = field(default_factory=Refinements)
    mechanism_params: dict[str, Any] = field(default_factory=dict)
    startup_numbers: tuple[tuple[tuple[str, ...], re.Pattern[str], tuple[MessageFact, ...]], ...] = ()
    """``(triggers, pattern, facts)`` of the figures vLLM prints while it starts."""
    gpu_sizes: dict[str, int | None] = field(default_factory=dict)
    """GPU name -> nominal GiB for a GPU named in prose (None: the name has several sizes)."""
    examples: list[Example] = field(default_factory=list)
    sources: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Rule id -> (file, line), for lint's messages."""
