"""Keep secrets out of everything the tool prints, saves or exports.

Logs and command lines carry API keys and hub tokens (``--api-key``, ``HF_TOKEN=…``, ``hf_…``,
``sk-…``, ``Authorization: Bearer …``). They are replaced by ``<redacted>`` before display.
"""

from __future__ import annotations

import re

SECRET_FLAGS = {
    "--api-key",
    "--hf-token",
    "--ssl-keyfile-password",
    "--token",
    "--password",
    "--secret",
}
SECRET_NAME_RE = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)", re.I)
REDACTED = "<redacted>"

_TEXT_PATTERNS = [
    re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)(authorization:\s*bearer\s+)[A-Za-z0-9._~+/=-]+"),
    re.compile(
        r"(?i)((?:--api[-_]key|--hf[-_]token|--token|[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY))"
        r"(?:=|\s+|'\s*:\s*'|\"\s*:\s*\"|:\s*)['\"]?)([^\s'\",)}]+)"
    ),
]


def secret_env_name(name: str) -> bool:
    return bool(SECRET_NAME_RE.search(name))


def redact_text(text: str) -> str:
    """Replace anything that looks like a credential in free text (a log line, a command)."""
    for pat in _TEXT_PATTERNS:
        # With a group, group 1 is the label to keep ("Authorization: Bearer ", "--api-key=").
        text = pat.sub(lambda m: m.group(1) + REDACTED, text) if pat.groups else pat.sub(REDACTED, text)
    return text


def redact_argv(argv: list[str]) -> list[str]:
    """Redact the values of secret flags and ``NAME=value`` words with secret-looking names."""
    out: list[str] = []
    hide_next = False
    for tok in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        name, eq, _ = tok.partition("=")
        norm = name.replace("_", "-")
        if norm in SECRET_FLAGS:
            if eq:
                out.append(f"{name}={REDACTED}")
            else:
                out.append(tok)
                hide_next = True
            continue
        if eq and not name.startswith("-") and secret_env_name(name):
            out.append(f"{name}={REDACTED}")
            continue
        out.append(redact_text(tok))
    return out


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if secret_env_name(k) else redact_text(v)) for k, v in env.items()}
