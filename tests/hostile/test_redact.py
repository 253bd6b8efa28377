"""The redactor's tables on each form a secret takes, and what they must leave alone."""

from __future__ import annotations

import pytest

from oomwizard.kb.loader import get_kb
from oomwizard.report.export import kb_json
from oomwizard.report.leaf import leaf_markdown, leaf_text
from oomwizard.text.output import clean_text
from oomwizard.text.redact import redact_argv, redact_data, redact_env, redact_text


def test_every_value_of_a_multi_value_api_key_is_hidden() -> None:
    argv = ["vllm", "serve", "m", "--api-key", "k1aaaa", "k2bbbb", "k3cccc", "--port", "8000", "--api_key=k4dddd"]
    assert redact_argv(argv) == ["vllm", "serve", "m", "--api-key", "<redacted>", "<redacted>", "<redacted>", "--port", "8000", "--api_key=<redacted>"]


def test_hf_token_without_a_value_stays_a_switch() -> None:
    assert redact_argv(["vllm", "serve", "m", "--hf-token", "--port", "1"]) == ["vllm", "serve", "m", "--hf-token", "--port", "1"]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("non-default args: {'api_key': ['AAAA1111', 'BBBB2222'], 'model': 'm'}", ("AAAA1111", "BBBB2222")),
        ('{"api_key": ["AAAA1111", "BBBB2222"]}', ("AAAA1111", "BBBB2222")),
        ("Namespace(api_key=['AAAA1111','BBBB2222'], hf_token='CCCC3333')", ("AAAA1111", "BBBB2222", "CCCC3333")),
        ("api_key='AAAA1111' model='m'", ("AAAA1111",)),
        ("see https://user:AAAA1111@host/x and postgres://u:BBBB2222@db", ("AAAA1111", "BBBB2222")),
        ("Authorization: Bearer AAAA1111.x", ("AAAA1111",)),
        ("failed token=AAAA1111, password=BBBB2222; secret=CCCC3333", ("AAAA1111", "BBBB2222", "CCCC3333")),
        ("VLLM_S3_CREDS=AAAA1111 MY_DB_PASSWORD=BBBB2222 AZURE_CLIENT_SECRET=CCCC3333", ("AAAA1111", "BBBB2222", "CCCC3333")),
        ("vllm serve m --api-key AAAA1111 BBBB2222 --port 8000", ("AAAA1111", "BBBB2222")),
        ("AccountName=a;AccountKey=AAAA1111;", ("AAAA1111",)),
    ],
)
def test_redact_text_forms(text: str, secret: tuple[str, ...]) -> None:
    out = redact_text(text)
    assert not [s for s in secret if s in out], out
    assert "<redacted>" in out


def test_prose_and_ordinary_flags_are_left_alone() -> None:
    for text in (
        "vllm serve m --max-num-batched-tokens 8192 --max-num-seqs 256",
        "max_num_batched_tokens=8192, num_speculative_tokens=3, tokenizer='m', hf_token=None",
        "Each token of the prompt uses KV cache; the key point is memory.",
        'vllm serve m --api-key "$VLLM_API_KEY" --hf-token "$HF_TOKEN"',
    ):
        assert redact_text(text) == text


def test_env_names_by_suffix() -> None:
    env = {"HF_TOKEN": "a", "SSHKEY": "k", "X_CREDS": "b", "X_CREDENTIALS": "c", "GOOGLE_API_KEY": "d", "AWS_SESSION_TOKEN": "e",
           "CUDA_VISIBLE_DEVICES": "0,1", "VLLM_URL": "https://u:PW123456@h", "MAX_TOKENS": "5"}
    out = redact_env(env)
    assert [k for k, v in out.items() if v == "<redacted>"] == ["HF_TOKEN", "SSHKEY", "X_CREDS", "X_CREDENTIALS", "GOOGLE_API_KEY", "AWS_SESSION_TOKEN"]
    assert out["VLLM_URL"] == "https://u:<redacted>@h" and out["MAX_TOKENS"] == "5"


def test_redact_data_walks_json() -> None:
    assert redact_data({"argv": ["vllm", "serve", "--api-key", "k1", "k2", "--port", "1"]}) == {"argv": ["vllm", "serve", "--api-key", "<redacted>", "<redacted>", "--port", "1"]}
    data = {"args": {"api_key": ["a1", "a2"], "max_num_seqs": 8}, "env": {"VLLM_API_KEY": "k"}, "detail": "hf_token='xyz123456'"}
    assert redact_data(data) == {"args": {"api_key": ["<redacted>", "<redacted>"], "max_num_seqs": 8}, "env": {"VLLM_API_KEY": "<redacted>"}, "detail": "hf_token='<redacted>'"}


def _strings(data: object) -> list[str]:
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return [data] if isinstance(data, str) else []


def test_the_output_boundary_leaves_the_knowledge_base_unchanged() -> None:
    """Every output passes :func:`clean_text`, so it must never change the product's own words,
    commands or placeholders: every string of the export, every article, every rendered leaf."""
    kb = get_kb()
    texts = _strings(kb_json(kb)) + [a.body for a in kb.articles.values()]
    for lang in ("en", "zh"):
        texts += [leaf_text(leaf, None, None, lang) + leaf_markdown(leaf, None, None, lang) for leaf in kb.leaves.values()]
    assert len(texts) > 500
    assert [t[:120] for t in texts if clean_text(t) != t] == []


def test_environment_names_from_the_clouds() -> None:
    names = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_CONNECTION_STRING",
             "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "VLLM_API_KEY"]
    assert all(v == "<redacted>" for v in redact_env(dict.fromkeys(names, "x")).values())


def test_a_rewritten_command_reads_every_hidden_value_back_from_the_shell() -> None:
    """The words a shell makes of the rewritten command are the operator's own, from variables."""
    import subprocess

    from oomwizard.advice.commands import ServeCommand

    cmd = ServeCommand([
        "vllm", "serve", "m", "--api-key", "k-one-1234", "k-two-5678", "--download-dir", "https://u:pw-9876@h/x",
        "--model-loader-extra-config", '{"hf_token": "hf-tok-5555", "d": "$x`y\\\\"}', "--hf_token=hf-eq-4444",
    ])
    text = cmd.text()
    assert not [s for s in ("k-one-1234", "k-two-5678", "pw-9876", "hf-tok-5555", "hf-eq-4444") if s in text]
    assert cmd.secret_vars() == ["VLLM_API_KEY", "VLLM_API_KEY_2", "DOWNLOAD_DIR_SECRET", "MODEL_LOADER_EXTRA_CONFIG_SECRET", "HF_TOKEN"]
    env = {"PATH": "/usr/bin:/bin", "VLLM_API_KEY": "A", "VLLM_API_KEY_2": "B", "HF_TOKEN": "H", "DOWNLOAD_DIR_SECRET": "P", "MODEL_LOADER_EXTRA_CONFIG_SECRET": "T"}
    words = subprocess.run(["sh", "-c", 'printf "%s\\n" ' + text], env=env, capture_output=True, text=True, timeout=30).stdout.splitlines()
    assert words == ["vllm", "serve", "m", "--api-key", "A", "B", "--download-dir", "https://u:P@h/x",
                     "--model-loader-extra-config", '{"hf_token": "T", "d": "$x`y\\\\"}', "--hf_token=H"]
