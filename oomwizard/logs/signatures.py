"""Every rule that turns log text into a scenario, as the reader and the ranking use them.

The rules themselves are data in ``decision_trees/diagnosis/`` (loaded by :mod:`.rules`):

* ``messages.yaml`` — messages that name their cause (``… when warming up sampler …``,
  ``Workspace is locked …``), each with its scenario, score, the failure phase it implies, the
  reason shown to the operator, the facts its groups hold and examples; and PyTorch's generic GPU
  out-of-memory error.
* ``frames.yaml`` — which traceback frames say which start-up phase was running, and frames that
  add context (LoRA, speculative decoding, sort/top-k, model runner V2, multimodal encoders,
  custom all-reduce, DeepGEMM).
* ``timeline.yaml`` — ordinary start-up lines that tell how far the engine got, for failures
  that come without a traceback.
* ``tiers.yaml`` and ``numbers.yaml`` — the named score tiers and the numbers reasoned with.
* ``refinements.yaml`` — what refines a placed failure into its scenarios (:mod:`.refine`).

Every trigger of these rules is also what the reader searches each byte of a log for
(``collect.scanner``), so a rule added there is found wherever it sits in the input. This
module keeps the names the reader and the ranking import, and the reader's own line shapes.
"""

from __future__ import annotations

import re

from .rules import FrameFlag, FramePhase, Signature, phrase, rules

__all__ = ["FrameFlag", "FramePhase", "Signature", "phrase"]

_R = rules()

# Scores (``tiers.yaml``): a message that names its cause, then that message refined by context,
# then the phase read from a traceback, then the phase guessed from how far start-up got.
MESSAGE = _R.tiers["message"]
REFINED = _R.tiers["refined"]
PHASE = _R.tiers["phase"]
NEIGHBOUR = _R.tiers["neighbour"]
"""The phase another worker's traceback or method names for an error that has no frames of its own."""
TIMELINE_PHASE = _R.tiers["timeline"]
OTHER_PROCESS = _R.tiers["other_process"]
WEAK = _R.tiers["weak"]
CUT = _R.tiers["cut"]
"""A traceback the input stops inside: its frames name the phase, but nothing says it was memory."""
CUT_TIMELINE = _R.tiers["cut_timeline"]
"""A traceback the input stops inside whose frames name no phase, placed by how far start-up got."""
ENDED = _R.tiers["ended"]
"""No error at all in a log that stops during start-up: the phase its last start-up line began.
Never confident (below ``CONFIDENT`` whatever the refinements add)."""
ENDED_BEGUN = _R.tiers["ended_begun"]
CUT_CONSTRUCTION = _R.tiers["cut_construction"]
"""A traceback cut inside the engine's construction, no step of start-up in view: the steps it runs."""
"""The same, stopped after the line that began the start, before any step: its first step."""
"""A traceback the input stops inside whose frames name no phase, placed by how far start-up got."""
CUT_PHASES: tuple[tuple[str, str, frozenset[str]], ...] = _R.cut_phases
"""``(frame, phase, unless)`` for a traceback cut short whose deepest known frame is a step that
runs several phases (``frames.yaml``)."""
EARLIER_RUN = _R.thresholds["earlier_run"]
"""Factor for evidence from an earlier start of the engine than the last one that failed."""
CONFIDENT = _R.thresholds["confident"]
"""Below this the best match is shown but does not pre-answer the wizard's first question."""

SIGNATURES: tuple[Signature, ...] = _R.messages
"""Messages that name their cause."""

WARMUP_RAISERS = _R.warmup_raisers
ENGINE_CODE = _R.engine_code
FORWARD_FRAMES = _R.forward_frames
CONSTRUCTION_FRAMES = _R.construction_frames
WARMUP_CUT = _R.inferred["sampler-warmup-cut"]
"""The warm-up's ``RuntimeError`` when the log was cut inside its message (an issue body over
GitHub's length limit, a truncated paste): the frame that raised it is enough."""

KV_BLOCKS_SHORT = _R.inferred["kv-blocks-short"]
"""V0 prints the block count before it checks it against max_model_len, and the check raises
whenever ``blocks x block_size < max_model_len``: a paste cut before that error still shows it."""
BLOCK_SIZE = 16
"""V0's default KV cache block size, when the log does not state another."""
GPU_BLOCKS_RE = re.compile(r"#\s*(?!(?i:cpu)\b)[A-Za-z]+\s*blocks:\s*(?P<n>\d+)\b(?![.\d])")

OOM_RE = _R.gpu_oom
"""A GPU out-of-memory error without a cause of its own: PyTorch's message (CUDA, ROCm, Intel),
the old parenthesised form, a raw CUDA error, or vLLM's engine-level text."""
OOM_TRIGGERS = _R.gpu_oom_triggers
GPU_OOM_FACTS = _R.gpu_oom_facts
"""The facts the generic OOM's groups carry (its platform)."""

# --- traceback frames ---------------------------------------------------------------------------
FRAME_RE = re.compile(r"File \"(?P<path>[^\"]+)\", line (?P<line>\d+), in (?P<func>[\w<>.]+)")
METHOD_RE = re.compile(r"(?:while processing method|Error executing method)\s*'?(?P<func>\w+)")
"""The worker method that failed, as vLLM's executors name it before the traceback."""


FRAME_PHASES: tuple[FramePhase, ...] = _R.frame_phases
"""Most specific first: the first phase any frame of a traceback matches wins. A multimodal
encoder is not a phase of its own: it runs inside the profiling pass (start-up) or inside
``execute_model`` (serving); the ``mm_encoder`` flag tells which."""
FRAME_FLAGS: tuple[FrameFlag, ...] = _R.frame_flags

# --- how far start-up got -------------------------------------------------------------------------
TIMELINE: tuple[tuple[str, re.Pattern[str] | None, str], ...] = _R.timeline
"""(trigger, regex or None, phase that is running *after* this line)"""
REQUEST_LAYER_DEATH = _R.request_layer_death
"""What the layer answering requests prints when the engine under it dies: only an engine that
was serving has such a layer waiting on it, so these lines place an error printed just before."""
SERVING_LOOPS = _R.serving_loops
"""Functions that only run once the engine serves: a traceback through any of them shows it got there."""
SERVING_SOURCES = _R.serving_sources
"""Logger files of the request layer: an error they log means requests were being served."""
SLEEP_MARKS: tuple[tuple[str, re.Pattern[str], str], ...] = _R.sleep_marks
"""What vLLM prints when it has fallen asleep and when it has woken; an error between the two
happened while vLLM slept."""
SLEEP_PARTIAL_TAGS = _R.sleep_partial_tags
"""A wake-up of the weights alone (``tags ['weights']``): the KV cache is still asleep."""
RUN_START_RE = _R.run_start
"""A line that begins a start (timeline.yaml ``run_start``)."""
RUN_START_TRIGGERS = _R.run_start_triggers
MM_PROFILE_RE = _R.mm_profile
"""Lines that say the profiling pass runs on multimodal inputs."""
MM_PROFILE_TRIGGERS = _R.mm_profile_triggers
PROGRESS_RE = re.compile(r"(?:\|\s*|\s)(?P<done>\d+)/(?P<total>\d+)\s*\[")
"""A tqdm bar's ``k/n [``: below ``n`` the stage it counts had not finished."""
NEAR_LINES = 60
"""How far (physical lines) a worker's method or a flushed progress bar may sit from an OOM that
has no frames of its own and still say what was running."""
OTHER_PROCESS_LINES = 4 * NEAR_LINES
"""How far another process's traceback may be from an error it places: the chunks of one paste."""

# --- context (``numbers.yaml``) ----------------------------------------------------------------------
LARGE_VOCAB = _R.large_vocab
"""A vocabulary this large makes the sampler's sort over (requests x vocabulary) expensive."""
MRV2_ZERO = _R.mrv2_zero
"""Releases where model runner V2 reserves no CUDA graph memory (``vllm-facts.md`` §1)."""
DEEPSEEK_V32_RE = _R.deepseek_v32
FRAGMENTATION_MIN = _R.fragmentation_min
GPU_SIZES = _R.gpu_sizes
STARTUP_NUMBERS = _R.startup_numbers
"""``(triggers, pattern, facts)`` of the start-up figures (``startup_numbers``)."""
"""GPU name -> nominal GiB, for a GPU named in prose (``gpu_size``)."""
"""Reserved-but-unallocated memory below this is too small to call fragmentation."""
