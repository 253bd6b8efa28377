"""Commands for this machine: rewriting the operator's own ``vllm serve`` line, and rendering fixes."""

from __future__ import annotations

import pytest

from oomwizard.advice.commands import ServeCommand, canonical, opposites, render_fix, render_variant
from oomwizard.facts.model import Fact, FactSet
from oomwizard.i18n import Text
from oomwizard.kb.model import Fix, Variant
from oomwizard.versions import VersionSpec


def rewrite(cmd: str, *ops: tuple[str, ...]) -> str:
    c = ServeCommand.parse(cmd)
    for name, *args in ops:
        getattr(c, name)(*args)
    return c.text()


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("--max_num_seqs", "--max-num-seqs"),
        ("--max-num-seqs", "--max-num-seqs"),
        ("-tp", "--tensor-parallel-size"),
        ("-O", "--optimization-level"),
        ("--compilation-config.cudagraph_mode", "--compilation-config.cudagraph_mode"),
        ("--compilation_config.cudagraph_mode", "--compilation-config.cudagraph_mode"),
        ("-cc.cudagraph_mode", "--compilation-config.cudagraph_mode"),
        ("-x", "-x"),
    ],
)
def test_canonical(flag: str, expected: str) -> None:
    assert canonical(flag) == expected


def test_opposites() -> None:
    assert opposites("--enforce-eager") == {"--no-enforce-eager"}
    assert opposites("--no-enable-prefix-caching") == {"--enable-prefix-caching"}
    assert opposites("--enable-prefix-caching") == {"--no-enable-prefix-caching", "--disable-prefix-caching", "--no-disable-prefix-caching"}
    assert "--enable-custom-all-reduce" in opposites("--disable-custom-all-reduce")


@pytest.mark.parametrize(
    ("cmd", "ops", "expected"),
    [
        ("vllm serve m --max_num_seqs 256 --enforce-eager", [("set", "--max-num-seqs", "128")], "vllm serve m --max-num-seqs 128 --enforce-eager"),
        ("vllm serve m --max-num-seqs=256", [("set", "--max-num-seqs", "128")], "vllm serve m --max-num-seqs 128"),
        ("vllm serve m --max-num-seqs 256 --max-num-seqs 512", [("set", "--max-num-seqs", "128")], "vllm serve m --max-num-seqs 128"),
        ("vllm serve m -tp 8 --trust-remote-code", [("set", "--tensor-parallel-size", "4")], "vllm serve m --tensor-parallel-size 4 --trust-remote-code"),
        ("vllm serve m --no-enforce-eager", [("set", "--enforce-eager", None)], "vllm serve m --enforce-eager"),
        ("vllm serve m --enforce-eager", [("set", "--enforce-eager", None)], "vllm serve m --enforce-eager"),
        ("vllm serve m --enable-prefix-caching --gpu-memory-utilization 0.9", [("set", "--no-enable-prefix-caching", None)],
         "vllm serve m --gpu-memory-utilization 0.9 --no-enable-prefix-caching"),
        ("vllm serve m --max-model-len -1", [("set", "--max-model-len", "4096")], "vllm serve m --max-model-len 4096"),
        ("vllm serve m --enforce-eager m2", [("set", "--max-num-seqs", "8")], "vllm serve m --enforce-eager m2 --max-num-seqs 8"),
        ("vllm serve m --enable-lora --max-loras 4", [("set", "--max-loras", "1")], "vllm serve m --enable-lora --max-loras 1"),
        ("vllm serve 'my model' -O3", [("set", "--max-num-seqs", "8")], "vllm serve 'my model' -O3 --max-num-seqs 8"),
        ("python -m vllm.entrypoints.openai.api_server --model m --kv-cache-dtype fp8", [("set", "--kv-cache-dtype", "auto")],
         "python -m vllm.entrypoints.openai.api_server --model m --kv-cache-dtype auto"),
        ('vllm serve m --speculative-config \'{"method": "mtp"}\' --max-model-len 1000', [("remove", "--speculative-config")],
         "vllm serve m --max-model-len 1000"),
        ("vllm serve m --speculative-config.method mtp --speculative-config.num_speculative_tokens 2 -tp 2", [("remove", "--speculative-config")],
         "vllm serve m -tp 2"),
        ("vllm serve m --compilation-config.cudagraph_mode PIECEWISE -cc.mode=3 --max-num-seqs 4", [("set", "--compilation-config", '{"mode": 0}')],
         "vllm serve m --max-num-seqs 4 --compilation-config '{\"mode\": 0}'"),
        ("vllm serve m --compilation-config.cudagraph_mode PIECEWISE", [("set", "--compilation-config.cudagraph_mode", "NONE")],
         "vllm serve m --compilation-config.cudagraph_mode NONE"),
        ("vllm serve m --api-key sk-abcdefghijklmnopqrstu", [("set", "--max-num-seqs", "8")], 'vllm serve m --api-key "$VLLM_API_KEY" --max-num-seqs 8'),
        ("vllm serve m --max-num-seqs", [("remove", "--max-num-seqs")], "vllm serve m"),
    ],
)
def test_rewrite_the_operators_command(cmd: str, ops: list[tuple[str, ...]], expected: str) -> None:
    assert rewrite(cmd, *ops) == expected


def test_has_and_unbalanced_quotes() -> None:
    c = ServeCommand.parse("vllm serve m --max_num_seqs=4 -tp 2")
    assert c.has("--max-num-seqs") and c.has("--tensor-parallel-size") and not c.has("--enforce-eager")
    broken = ServeCommand.parse("vllm serve 'm --max-num-seqs 4")  # shlex fails: split on spaces
    assert broken.argv == ["vllm", "serve", "'m", "--max-num-seqs", "4"]


def _fix(*variants: Variant) -> Fix:
    return Fix("f", Text("Fix", "修复"), "low", Text("", ""), "documented", variants)


def _facts(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, f"test {k}", kind="log") for k, v in values.items())


V_OLD = Variant(VersionSpec.parse(">=0.8,<0.20"), flags=(("--max-num-seqs", "{max_num_seqs}"), ("--enforce-eager", None)))
V_NEW = Variant(
    VersionSpec.parse(">=0.20"),
    flags=(("--max-num-seqs", "64"),),
    remove_flags=("--speculative-config",),
    env=(("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),),
    unset_env=("PYTORCH_ALLOC_CONF",),
    shell=("nvidia-smi --query-compute-apps=pid,used_memory --format=csv",),
    note=Text("note", "说明"),
)


def test_render_without_a_known_command_line() -> None:
    rv = render_variant(V_NEW, FactSet())
    assert rv.script.splitlines() == [
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "unset PYTORCH_ALLOC_CONF",
        "nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
        "vllm serve <MODEL> --max-num-seqs 64  # plus your other flags; remove --speculative-config",
    ]
    assert rv.versions == ">=0.20" and rv.note == Text("note", "说明") and rv.missing == []


def test_render_applies_the_fix_to_the_running_command() -> None:
    facts = _facts(serve_command="vllm serve org/model --max-num-seqs 256 --speculative-config '{\"method\": \"mtp\"}'", model="org/model")
    rv = render_variant(V_NEW, facts)
    assert rv.script.splitlines()[-1] == "vllm serve org/model --max-num-seqs 64"


def test_placeholders_are_filled_or_stay_visible() -> None:
    rv = render_variant(V_OLD, FactSet())
    assert "--max-num-seqs <MAX_NUM_SEQS> --enforce-eager" in rv.script and rv.missing == ["<MAX_NUM_SEQS>"]
    rv = render_variant(V_OLD, _facts(max_num_seqs=32, model="m"))
    assert rv.script == "vllm serve m --max-num-seqs 32 --enforce-eager  # plus your other flags"
    assert rv.values[0].name == "max_num_seqs" and rv.values[0].why.en == "max_num_seqs from test max_num_seqs"  # type: ignore[union-attr]


def test_env_values_are_quoted() -> None:
    v = Variant(VersionSpec.parse("*"), env=(("NAME", "a b; rm -rf /"),))
    assert render_variant(v, FactSet()).script == "export NAME='a b; rm -rf /'\nvllm serve <MODEL>  # plus your other flags"


def test_render_fix_picks_the_variant_for_the_version() -> None:
    fix = _fix(V_OLD, V_NEW)
    # the version unknown: every variant, the newest release's first (the one a paste gives live)
    assert [rv.versions for rv in render_fix(fix, FactSet()).variants] == [">=0.20", ">=0.8,<0.20"]
    rf = render_fix(fix, _facts(vllm_version="0.21.0"))
    assert rf.available and [rv.versions for rv in rf.variants] == [">=0.20"] and rf.version == "0.21.0"
    assert rf.variants[0].assumed is None
    rc = render_fix(fix, _facts(vllm_version="0.22.0rc1"))
    assert rc.variants[0].assumed == "0.22.0"
    old = render_fix(fix, _facts(vllm_version="0.7.3"))
    assert not old.available and len(old.variants) == 2 and old.version == "0.7.3"
    nightly = render_fix(fix, _facts(vllm_version="nightly"))
    assert nightly.available and len(nightly.variants) == 2


def test_value_of_a_flag_in_any_spelling() -> None:
    from oomwizard.advice.commands import ServeCommand

    cmd = ServeCommand.parse("""vllm serve m -sc '{"method": "ngram"}' --max_num_seqs=64 --enforce-eager""")
    assert cmd.value("--speculative-config") == '{"method": "ngram"}'
    assert cmd.value("--max-num-seqs") == "64"
    assert cmd.value("--enforce-eager") is None
    assert cmd.value("--kv-cache-dtype") is None
