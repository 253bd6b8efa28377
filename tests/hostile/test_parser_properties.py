"""Property-based tests for the parsers that read what others wrote: vLLM's logged arguments, a
command line from a log or a process, and a knowledge-base tree file. Any text gives a result or
the documented error, never an exception of another kind, and what comes out is printable."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomwizard.advice.commands import ServeCommand
from oomwizard.kb.loader import load_kb
from oomwizard.logs import args

# Text shaped like the fragments these parsers meet: brackets, quotes, escapes, flags, numbers.
pieces = st.sampled_from(["{", "}", "[", "]", "(", ")", "'", '"', "\\", ",", ":", "=", " ", "--", "-O", "3",
                          "0.9", "None", "True", "model", "api_key", "max_model_len", "Namespace(", "\x1b[31m",
                          "\u202e", "\x00", "\n", "é", "显存"])
fragment = st.lists(st.one_of(pieces, st.text(max_size=8)), max_size=60).map("".join)
settings_ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings_
@given(fragment)
def test_logged_argument_parsers_never_raise(text: str) -> None:
    for parse in (args.parse_dict_repr, args.parse_kv_repr, args.parse_non_default_args, args.parse_namespace,
                  args.parse_engine_config, args.llm_call_args, args.command_args, args.find_command):
        parse(text)  # a value or None; an exception is a defect
    list(args.split_top(text))


@settings_
@given(st.dictionaries(st.sampled_from(["model", "max_model_len", "gpu_memory_utilization", "api_key",
                                        "tensor_parallel_size", "compilation_config", "enforce_eager"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), fragment,
                                 st.lists(fragment, max_size=3), st.dictionaries(fragment, st.integers(), max_size=2)),
                       max_size=7))
def test_a_command_rebuilt_from_logged_arguments_keeps_its_numbers(values: dict[str, object]) -> None:
    """Any logged arguments rebuild into a command (or none, without a model) that parses again and
    still carries the numbers it was given."""
    cmd = args.serve_command(values)
    if cmd is None:
        return
    parsed = ServeCommand.parse(cmd)
    mml = values.get("max_model_len")
    if type(mml) is int and isinstance(values.get("model"), str) and values["model"].strip():
        assert f"--max-model-len {mml}" in cmd and parsed.has("--max-model-len")


@settings_
@given(fragment)
def test_a_command_line_parses_into_flags_without_raising(text: str) -> None:
    cmd = ServeCommand.parse("vllm serve m " + text)
    cmd.has("--max-model-len")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_a_damaged_tree_file_is_a_problem_with_a_line_not_a_crash(tmp_path: Path, junk: bytes) -> None:
    root = tmp_path / "kb"
    (root / "decision_trees").mkdir(parents=True, exist_ok=True)
    (root / "content").mkdir(exist_ok=True)
    (root / "decision_trees" / "tree.yaml").write_bytes(b"start: symptom\nquestions:\n" + junk)
    _, problems = load_kb(root, strict=False)
    assert problems
    assert all(p.file for p in problems)
