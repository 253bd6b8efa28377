"""Keep secrets out of everything the tool prints, saves, copies or exports.

Logs, command lines and environments carry API keys, hub tokens and passwords. One set of tables
says what a secret looks like (a flag, a name, a shape); :func:`redact_text`, :func:`redact_argv`,
:func:`redact_env` and :func:`redact_data` apply them to text, argv, an environment and JSON-like
data. Output boundaries run them once more over the finished text, so a secret that slipped past
collection still never reaches the operator's screen, clipboard or files.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

SECRET_FLAGS: dict[str, str] = {
    # flag -> how many values argparse gives it: "+" one or more, "?" optional, "1" exactly one.
    # vLLM's --api-key takes several keys since 0.10.1 (``api_key: list[str]``, nargs "+"; one
    # before, see API_KEY_LIST_SINCE); --hf-token may be given alone (nargs "?", then the cached
    # login is used). Where the release is not known, every word after --api-key up to the next
    # option is hidden.
    "--api-key": "+",
    "--hf-token": "?",
    "--ssl-keyfile-password": "1",
    "--token": "1",
    "--password": "1",
    "--secret": "1",
}
API_KEY_LIST_SINCE = (0, 10, 1)
"""First vLLM release whose ``--api-key`` takes several keys; before it the word after the one
key is the next argument (``vllm serve --api-key KEY MODEL`` names the model)."""


def _nargs(flag: str, vllm_version: str | None) -> str:
    """How many words ``flag`` takes in ``vllm_version`` (None: the most a release takes)."""
    if flag == "--api-key" and vllm_version:
        m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", str(vllm_version).strip())
        if m and tuple(int(x or 0) for x in m.groups()) < API_KEY_LIST_SINCE:
            return "1"
    return SECRET_FLAGS[flag]


SHELL_VARS = {"--api-key": "VLLM_API_KEY", "--hf-token": "HF_TOKEN"}
"""The variable a rewritten command reads a secret flag's value from: VLLM_API_KEY is the one vLLM
itself falls back to without --api-key, HF_TOKEN the Hugging Face hub's own. Other secret flags
read a variable named after the flag (``--ssl-keyfile-password`` -> ``SSL_KEYFILE_PASSWORD``)."""

# A name is secret when, lower-cased with "-" as "_", it ends with one of these or contains one of
# the inner words. "key" and "pass" alone are too common to count; "token" alone is a secret.
_NAME_ENDINGS = (
    "_key", "apikey", "accesskey", "accountkey", "secretkey", "privatekey", "token", "secret",
    "password", "passwd", "_pass", "_pwd", "creds", "credential", "credentials", "connection_string",
)
_NAME_INNER = ("secret", "password", "passwd", "api_key", "apikey", "access_key", "private_key")
_NAME_EXCLUDE = ("_tokens", "per_token")
"""Counts, not secrets: ``max_num_batched_tokens``, ``kv_bytes_per_token``."""


def secret_name(name: str) -> bool:
    """``HF_TOKEN``, ``api_key``, ``VLLM_S3_CREDS``, ``AccountKey``: a name whose value is a secret."""
    n = name.lower().replace("-", "_").strip("_")
    if not n or n.endswith(_NAME_EXCLUDE):
        return False
    return n.endswith(_NAME_ENDINGS) or any(w in n for w in _NAME_INNER)


_ENV_ENDINGS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDS", "CREDENTIALS")


def secret_env_name(name: str) -> bool:
    """An environment variable holding a secret: :func:`secret_name`, or any name ending in KEY,
    TOKEN, SECRET, PASSWORD, CREDS or CREDENTIALS (``SSHKEY``, ``NGC_CLI_APIKEY``)."""
    return secret_name(name) or name.upper().endswith(_ENV_ENDINGS)


_KEEP_VALUES = {"", "none", "null", "true", "false", "[]", "''", '""', REDACTED.lower()}
_SHELL_REF_RE = re.compile(r"""^\\?["']?\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\\?["']?$""")  # also inside JSON


def _kept(value: str) -> bool:
    """Values that are not secrets: empty, None, a shell reference, already redacted."""
    v = value.strip().strip(",;")
    return v.lower() in _KEEP_VALUES or bool(_SHELL_REF_RE.match(v)) or v.strip("'\"") == REDACTED


# --- text ---------------------------------------------------------------------------------------

_SHAPES = [  # a secret recognised by its own shape, anywhere
    re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"),
]
_LABELLED = [  # group 1 is kept, group 2 is the secret
    re.compile(r"(?i)(\b(?:authorization|proxy-authorization)\s*[:=]\s*(?:bearer|basic|token)?\s*)([A-Za-z0-9._~+/=-]+)"),
    re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{6,})"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/@:'\"]*:)([^\s/@'\"]+)(?=@)"),  # scheme://user:PASS@host
]
_FLAG_RE = re.compile(
    r"(?i)(?<![\w-])(--(?:" + "|".join(f[2:].replace("-", "[-_]") for f in SECRET_FLAGS) + r"))"
    r"(=\S+|(?:[ \t]+(?!-)\S+)+)?"
)
# name, separator, value: key=value, key: value, 'key': 'value', "key": [...], key=['a', 'b']
_KEY_RE = re.compile(
    r"""(?<![\w-])(?P<q>['"]?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P=q)(?P<sep>[ \t]*(?:=|:(?!//))[ \t]*)"""
)
_VAL_RE = re.compile(r"""\[[^\]]*\]|'[^']*'|"[^"]*"|[^\s,;)}\]'"]+""")
_BARE_COLON = {"password", "passwd", "secret"}


def _redact_value(val: str) -> str:
    if _kept(val):
        return val
    if val.startswith("["):
        items = re.findall(r"""'[^']*'|"[^"]*"|[^,\s\[\]]+""", val)
        return "[" + ", ".join(i if _kept(i) else f"{i[0]}{REDACTED}{i[0]}" if i[0] in "'\"" else REDACTED for i in items) + "]"
    if val[0] in "'\"":
        return f"{val[0]}{REDACTED}{val[0]}"
    return REDACTED


def _key_values(text: str) -> str:
    """``name=value``, ``'name': [...]``, ``"name": "..."``: the value goes when the name is secret.

    Only a secret name consumes its value, so ``args: Namespace(api_key=[...])`` still reaches
    ``api_key``."""
    out, pos = [], 0
    for m in _KEY_RE.finditer(text):
        if m.start() < pos:
            continue
        name, sep = m.group("name").rsplit(".", 1)[-1], m.group("sep")
        if not secret_name(name):
            continue
        if not m.group("q") and (sep[0] in " \t" or (":" in sep and "_" not in name and name.lower() not in _BARE_COLON)):
            continue  # prose ("per token = 16 GiB", "token: 128 KiB"), not a setting
        v = _VAL_RE.match(text, m.end())
        if v is None:
            continue
        out.append(text[pos : v.start()] + _redact_value(v.group(0)))
        pos = v.end()
    return "".join(out) + text[pos:]


def _flag(m: re.Match[str]) -> str:
    flag, rest = m.group(1), m.group(2)
    if not rest:
        return m.group(0)
    if rest.startswith("="):
        return flag + "=" + _redact_value(rest[1:])
    nargs = SECRET_FLAGS.get("--" + flag[2:].lower().replace("_", "-"), "1")
    out, first = [], True
    for part in re.split(r"([ \t]+)", rest):
        if not part or part.isspace():
            out.append(part)
            continue
        hide = first or nargs == "+"
        out.append(_redact_value(part) if hide else part)
        first = False
    return flag + "".join(out)


def redact_text(text: str) -> str:
    """Replace anything that looks like a credential in free text (a log line, a command, a report)."""
    for pat in _SHAPES:
        text = pat.sub(REDACTED, text)
    for pat in _LABELLED:
        text = pat.sub(lambda m: m.group(1) + (m.group(2) if _kept(m.group(2)) else REDACTED), text)
    text = _FLAG_RE.sub(_flag, text)
    return _key_values(text)


# --- argv, environments, data ---------------------------------------------------------------------


def flag_name(tok: str) -> str | None:
    """``--api_key=x`` -> ``--api-key`` when the word is a secret flag."""
    name = tok.partition("=")[0]
    norm = "--" + name[2:].replace("_", "-") if name.startswith("--") else name
    return norm if norm in SECRET_FLAGS else None


def secret_value_spans(argv: list[str], vllm_version: str | None = None) -> list[tuple[int, int, str]]:
    """(first, end, flag) of the separate value words of every secret flag (``--api-key k1 k2``),
    as the argument parser of ``vllm_version`` takes them (None: of the release taking the most)."""
    spans = []
    i = 0
    while i < len(argv):
        flag = flag_name(argv[i])
        if flag and "=" not in argv[i]:
            nargs, j = _nargs(flag, vllm_version), i + 1
            while j < len(argv) and ((nargs == "1" and j == i + 1) or not argv[j].startswith("-")):
                j += 1
                if nargs != "+":
                    break
            spans.append((i + 1, j, flag))
            i = j
        else:
            i += 1
    return spans


def redact_argv(argv: list[str], vllm_version: str | None = None) -> list[str]:
    """Hide every value of a secret flag and of ``NAME=value`` words with secret names.

    Where ``vllm_version`` says a secret flag takes exactly one word, flag and value become one
    ``--flag=<redacted>`` word: then no later pass, which cannot know the release, takes the word
    after it (the model) for a second value."""
    out = list(argv)
    hidden = set()
    joined = set()
    for first, end, flag in secret_value_spans(out, vllm_version):
        if vllm_version and end == first + 1 and _nargs(flag, vllm_version) != SECRET_FLAGS[flag]:
            out[first - 1] = f"{out[first - 1]}={REDACTED}"
            joined.add(first)
            continue
        for k in range(first, end):
            out[k] = REDACTED
            hidden.add(k)
    if joined:
        out = [w for k, w in enumerate(out) if k not in joined]
        hidden = {k - sum(1 for j in joined if j < k) for k in hidden}
    for k, tok in enumerate(out):
        if k in hidden:
            continue
        name, eq, _ = tok.partition("=")
        if eq and (flag_name(tok) or (not name.startswith("-") and secret_name(name))):
            out[k] = f"{name}={REDACTED}"
        else:
            out[k] = redact_text(tok)
    return out


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if secret_env_name(k) and not _kept(v) else redact_text(v)) for k, v in env.items()}


def redact_data(data: Any) -> Any:
    """JSON-like data with secrets hidden: values under secret names, and secrets inside strings."""
    if isinstance(data, dict):
        out = {}
        for k, v in data.items():
            if isinstance(k, str) and secret_name(k) and v not in (None, True, False, "", []):
                out[k] = [REDACTED for _ in v] if isinstance(v, list) else REDACTED if not isinstance(v, dict) else redact_data(v)
            else:
                out[k] = redact_data(v)
        return out
    if isinstance(data, (list, tuple)):
        if all(isinstance(v, str) for v in data) and any(flag_name(v) for v in data):
            return redact_argv(list(data))  # an argv: ["--api-key", "k1", "k2"]
        return [redact_data(v) for v in data]
    if isinstance(data, str):
        return redact_text(data)
    return data
