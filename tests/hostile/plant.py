"""Planted secrets and escape payloads, and the places they are planted in.

Every secret is a distinct string, so a leak can be counted by exact match. The inputs are the
ones an operator's box really has: the shell environment, running servers (a fake ``/proc`` that
``OOMWIZARD_PROC_ROOT`` points detection at, with argv, environ and a ``--config`` YAML), and the
log. Detection never probes an interpreter here: no planted server names an existing Python.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
sys.path.insert(0, str(TESTS / "fixtures" / "machine"))

from fake_proc import make_proc  # noqa: E402

DEMO_LOG = TESTS.parent / "oomwizard" / "demo" / "vllm-serve.log"


def _hf(tag: str) -> str:
    return "hf_" + (tag + "Q7x2Lm9Pz4Rk8Wd3Vb6Nc1").ljust(34, "Z")[:34]


def _sk(tag: str) -> str:
    return "sk-" + (tag + "proj9Fh2Kx7Lq4Zt").ljust(40, "Y")[:40]


# name -> value; names only say where a secret was planted
SECRETS: dict[str, str] = {
    # the shell environment of oomwizard itself
    "env_hf_token": _hf("EnvHf"),
    "env_openai": _sk("EnvOpenai"),
    "env_aws_secret": "wJalrXUtnFEMIK7MDENGbPxRfiCYEnvAwsSecret1",
    "env_aws_session": "FwoGZXIvYXdzEnvAwsSessionTok9",
    "env_vllm_api_key": "EnvVllmApiKeyQ8w7e6r5",
    "env_proxy_pass": "ProxyPassW0rd77",
    "env_endpoint_pass": "ShellUrlPass31",
    "env_azure_secret": "AzureClientSecretJ4k5l6",
    "env_azure_conn_key": "AzureAccountKeyR2t3y4u5",
    "env_gcp_api_key": "GcpApiKeyAb12Cd34Ef56",
    "env_gcp_creds": "GcpCredsFile9x8c7v",
    "env_db_password": "MyDbPassword5b6n7m",
    "env_s3_creds": "S3CredsValue0p9o8i",
    "env_vllm_hf_token": "VllmPrefixedHfTok3h4j",
    # server 2 (the second by pid): python -m vllm.entrypoints.openai.api_server
    "s1_api_key": _sk("SrvOneKey"),
    "s1_hf_token": _hf("SrvOneHf"),
    "s1_env_vllm_api_key": "SrvOneEnvApiKeyV5c4",
    # server 2: vllm serve with several keys, URLs with passwords, a JSON flag and a config file
    "s2_key_one": "SrvTwoKeyOne11aa",
    "s2_key_two": "SrvTwoKeyTwo22bb",
    "s2_key_three": "SrvTwoKeyThree33cc",
    "s2_key_eq": "SrvTwoKeyEquals44dd",
    "s2_ssl_pass": "SrvTwoSslKeyfilePass55",
    "s2_json_hf": "SrvTwoJsonHfTok66ee",
    "s2_json_pass": "SrvTwoJsonPass77ff",
    "s2_download_pass": "DlPass42gg",
    "s2_cfg_api_key": "CfgApiKey88hh",
    "s2_cfg_hf_token": "CfgHfTok99ii",
    "s2_env_url_pass": "UrlPass77jj",
    "s2_env_minio_pass": "MinioPass55kk",
    "s2_env_s3_creds": "SrvS3CredsLl12",
    "s2_env_db_password": "SrvDbPasswordMm34",
    "s2_env_aws_secret": "SrvAwsSecretNn56",
    "s2_env_hf_token": _hf("SrvTwoEnvHf"),
    # the log
    "log_key_one": "LogKeyOne01qq",
    "log_key_two": "LogKeyTwo02rr",
    "log_hf_token": _hf("LogArgsHf"),
    "log_ssl_pass": "LogSslPass03ss",
    "log_url_pass": "LogUrlPass04tt",
    "log_env_hf": _hf("LogEnvHf"),
    "log_env_aws": "LogEnvAwsSecret05uu",
    "log_env_openai": _sk("LogEnvOpenai"),
    "log_bearer": "LogBearerTok06vv.x7",
    "log_curl_pass": "CurlPass07ww",
    "log_ns_key_one": "NsKeyOne08xx",
    "log_ns_key_two": "NsKeyTwo09yy",
    "log_ns_hf": "NsHfTok10zz",
    "log_json_key_one": "JsonKeyOne11AB",
    "log_json_key_two": "JsonKeyTwo12CD",
    "oom_token": "OomToken13EF",
    "oom_hf": _hf("OomLineHf"),
    "oom_bearer": "OomBearer14GH",
    "oom_url_pass": "OomUrlPass15IJ",
    "oom_password": "OomPassword16KL",
    "oom_secret": "OomSecret17MN",
    "sampler_api_key": "SamplerApiKey18OP",
    "sampler_sk": _sk("SamplerSk"),
    # the command line of oomwizard itself (--set serve_command=...)
    "set_key_one": "SetKeyOne19QR",
    "set_key_two": "SetKeyTwo20ST",
    "set_url_pass": "SetUrlPass21UV",
}
S = SECRETS


def set_command() -> str:
    """A ``--set serve_command=…`` value as an operator would paste it."""
    return (
        f"serve_command=vllm serve org/m3 --api-key {S['set_key_one']} {S['set_key_two']} "
        f"--download-dir https://setuser:{S['set_url_pass']}@host.internal/x --max-num-seqs 256"
    )


def shell_env() -> dict[str, str]:
    """The environment oomwizard runs in: secrets under every naming convention."""
    return {
        "HF_TOKEN": S["env_hf_token"],
        "OPENAI_API_KEY": S["env_openai"],
        "AWS_SECRET_ACCESS_KEY": S["env_aws_secret"],
        "AWS_SESSION_TOKEN": S["env_aws_session"],
        "VLLM_API_KEY": S["env_vllm_api_key"],
        "HTTPS_PROXY": f"http://proxyuser:{S['env_proxy_pass']}@proxy.internal:3128",
        "VLLM_ENDPOINT": f"https://u:{S['env_endpoint_pass']}@h.internal",
        "AZURE_CLIENT_SECRET": S["env_azure_secret"],
        "AZURE_STORAGE_CONNECTION_STRING": f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={S['env_azure_conn_key']};",
        "GOOGLE_API_KEY": S["env_gcp_api_key"],
        "GOOGLE_APPLICATION_CREDENTIALS": f"/secrets/{S['env_gcp_creds']}.json",
        "MY_DB_PASSWORD": S["env_db_password"],
        "VLLM_S3_CREDS": S["env_s3_creds"],
        "VLLM_HF_TOKEN": S["env_vllm_hf_token"],
    }


def _servers(root: Path) -> list[dict[str, object]]:
    cwd = root / "cwd2"
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "cfg.yaml").write_text(
        f"api_key: {S['s2_cfg_api_key']}\nhf_token: {S['s2_cfg_hf_token']}\nmax_num_seqs: 256\n"
    )
    extra = json.dumps({"hf_token": S["s2_json_hf"], "password": S["s2_json_pass"]})
    env2 = {
        "PATH": "/nonexistent",
        "HF_TOKEN": S["s2_env_hf_token"],
        "AWS_SECRET_ACCESS_KEY": S["s2_env_aws_secret"],
        "VLLM_API_KEY": S["s1_env_vllm_api_key"],
        "VLLM_DOWNLOAD_URL": f"https://urluser:{S['s2_env_url_pass']}@dl.internal/x",
        "VLLM_MINIO": f"https://minio:{S['s2_env_minio_pass']}@minio.internal",
        "VLLM_S3_CREDS": S["s2_env_s3_creds"],
        "MY_DB_PASSWORD": S["s2_env_db_password"],
    }
    return [
        {
            "pid": 4300,
            "argv": ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "org/m1", "--api-key", S["s1_api_key"], "--hf-token", S["s1_hf_token"]],
            "environ": {"PATH": "/nonexistent", "VLLM_API_KEY": S["s1_env_vllm_api_key"]},
        },
        {
            "pid": 4100,
            "argv": [
                "vllm", "serve", "org/m2",
                "--api-key", S["s2_key_one"], S["s2_key_two"], S["s2_key_three"],
                "--api_key=" + S["s2_key_eq"],
                "--ssl-keyfile-password", S["s2_ssl_pass"],
                "--model-loader-extra-config", extra,
                "--download-dir", f"https://dluser:{S['s2_download_pass']}@host.internal/x",
                "--config", "cfg.yaml",
                "--max-num-seqs", "512",
            ],
            "environ": env2,
            "cwd": cwd,
        },
    ]


def fake_proc(root: Path) -> Path:
    return make_proc(root, _servers(root))


def _secret_lines(prefix: str) -> list[str]:
    return [
        f"{prefix} INFO 10-14 09:12:07 [env.py:1] HF_TOKEN={S['log_env_hf']} AWS_SECRET_ACCESS_KEY={S['log_env_aws']} OPENAI_API_KEY={S['log_env_openai']}",
        f"{prefix} INFO 10-14 09:12:07 [http.py:2] GET /v1/models Authorization: Bearer {S['log_bearer']}",
        f"{prefix} INFO 10-14 09:12:07 [dl.py:3] fetching https://curluser:{S['log_curl_pass']}@hub.internal/model",
        f"{prefix} INFO 10-14 09:12:07 [api_server.py:4] args: Namespace(api_key=['{S['log_ns_key_one']}', '{S['log_ns_key_two']}'], hf_token='{S['log_ns_hf']}', max_num_seqs=1024)",
        f'{prefix} INFO 10-14 09:12:07 [cfg.py:5] loaded {{"api_key": ["{S["log_json_key_one"]}", "{S["log_json_key_two"]}"], "max_num_seqs": 1024}}',
    ]


def _args_line(line: str) -> str:
    """The demo's non-default-args line with secret arguments added, as vLLM prints them."""
    extra = (
        f"'api_key': ['{S['log_key_one']}', '{S['log_key_two']}'], 'hf_token': '{S['log_hf_token']}', "
        f"'ssl_keyfile_password': '{S['log_ssl_pass']}', 'download_dir': 'https://loguser:{S['log_url_pass']}@host.internal/x', "
    )
    return line.replace("'host': '0.0.0.0', ", "'host': '0.0.0.0', " + extra)


def _oom_line(line: str) -> str:
    if "torch.OutOfMemoryError" in line:
        return line.replace(
            "torch.OutOfMemoryError:",
            f"token={S['oom_token']} HF_TOKEN={S['oom_hf']} Bearer {S['oom_bearer']} "
            f"https://oomuser:{S['oom_url_pass']}@h.internal password={S['oom_password']} secret={S['oom_secret']} torch.OutOfMemoryError:",
        )
    if "warming up sampler" in line and "Please" in line:
        return line.replace("Please", f"(api_key={S['sampler_api_key']} {S['sampler_sk']}) Please", 1)
    return line


def secrets_log(path: Path, with_args: bool = True) -> Path:
    """The demo log with secrets planted in the argument record, extra lines and the OOM lines."""
    lines = DEMO_LOG.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    for line in lines:
        if "non-default args" in line:
            if not with_args:
                continue
            out.append(_args_line(line))
            out.extend(_secret_lines("(APIServer pid=48102)"))
            continue
        out.append(_oom_line(line))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def keys_only_log(path: Path) -> Path:
    """The demo log whose argument record holds two API keys and a hub token, nothing else secret."""
    extra = f"'api_key': ['{S['log_key_one']}', '{S['log_key_two']}'], 'hf_token': '{S['log_hf_token']}', "
    text = DEMO_LOG.read_text(encoding="utf-8").replace("'host': '0.0.0.0', ", "'host': '0.0.0.0', " + extra, 1)
    path.write_text(text, encoding="utf-8")
    return path


# --- escape payloads ----------------------------------------------------------------------------

OSC52 = "\x1b]52;c;cm0gLXJmIH4vKgo=\x07"
OSC0 = "\x1b]0;PWNED-TITLE\x07"
PAYLOAD = (
    OSC52 + OSC0 + "\x1b]8;;http://evil.invalid\x1b\\link\x1b]8;;\x1b\\" + "\x1b[2J\x1b[H\x1b[?1049h"
    + "\x1bPq#0;2;0;0;0\x1b\\" + "\u009b2J" + "\u009d0;C1TITLE\u0007" + "SAFE\b\b\b\bEVIL" + "harmless\rEVIL"
    + "\u202eLTR\u202c\u2066iso\u2069\u200bzw"
)
# What no output may hold raw: C0 but tab, newline and CR; DEL; C1; invisible format characters
# (bidi controls, zero-width, BOM, tags); line and paragraph separators.
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0001\U000e0020-\U000e007f]"
)
# One name that a file system accepts: no "/" and no NUL.
EVIL_NAME = "evil\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[H\u009b31m\u202e.log"


def hostile_log(path: Path) -> Path:
    """The demo log with the payloads in its model name and around its OOM message."""
    out = []
    for line in DEMO_LOG.read_text(encoding="utf-8").splitlines():
        # the log's own colour codes are removed by the reader; the payloads are what this tests
        line = line.replace("meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama" + PAYLOAD + "-70B")
        if "torch.OutOfMemoryError" in line:
            line = line.replace("torch.OutOfMemoryError:", PAYLOAD + " torch.OutOfMemoryError:") + " " + PAYLOAD
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def hostile_proc(root: Path) -> Path:
    """A server whose script path, model name and environment carry the payloads."""
    script = root / ("e" + OSC0 + "\x1b[2J") / "vllm"
    return make_proc(
        root / "proc",
        [{"pid": 4100, "argv": [str(script), "serve", "org/m" + PAYLOAD, "--max-num-seqs", "512", "--served-model-name", PAYLOAD],
          "environ": {"PATH": "/nonexistent", "VLLM_LOGGING_PREFIX": PAYLOAD}}],
    )


def minimal_log(d: Path) -> Path:
    """The demo log without its argument record: the command then comes from the process."""
    text = "".join(ln + "\n" for ln in DEMO_LOG.read_text(encoding="utf-8").splitlines() if "non-default args" not in ln)
    p = d / "minimal.log"
    p.write_text(text, encoding="utf-8")
    return p


def leaks(text: str) -> dict[str, int]:
    """Occurrences of every planted secret, bounded by non-alphanumerics."""
    found = {}
    for name, value in SECRETS.items():
        n = len(re.findall(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", text))
        if n:
            found[name] = n
    return found


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """``oomwizard ARGS`` in a child process; ``env`` is added to a minimal environment."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "LANG", "SYSTEMROOT")}
    base.update(env or {})
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], capture_output=True, env=base, cwd=cwd, timeout=120)


def tui_outputs(log: Path, save_dir: Path) -> tuple[list[str], dict[str, str]]:
    """Walk the wizard on ``log`` to its fix, open the details, copy, save as .sh/.md/.txt and quit:
    every screen seen, and each text it put out (``copy``, ``clipboard``, the saved files and the
    ``exit print``)."""
    import io

    from snapshot_apps.pilot import press, run_async, screen_text, settle
    from snapshot_apps.stand_ins import StandIns, no_gpu_machine
    from textual.widgets import Input

    from oomwizard.frontend.options import LaunchOptions
    from oomwizard.kb.loader import get_kb
    from oomwizard.logs.diagnose import diagnose_paths
    from oomwizard.tui.app import Outcome, WizardApp, print_outcome
    from oomwizard.tui.screens.leaf import LeafScreen
    from oomwizard.tui.widgets.commands import FixCard

    si = StandIns(machine=no_gpu_machine(), diagnosis=diagnose_paths([str(log)]))
    app = WizardApp(LaunchOptions(logs=[str(log)]), kb=get_kb(), sources=si.sources(), environ={})
    app.clipboard_runner = lambda text: True  # type: ignore[assignment]
    screens: list[str] = []
    texts: dict[str, str] = {}

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            for _ in range(15):
                screens.append(screen_text(app))
                if isinstance(app.screen, LeafScreen):
                    break
                await press(pilot, "enter")
            assert isinstance(app.screen, LeafScreen)
            await press(pilot, "3")  # details: the path with the file names
            screens.append(screen_text(app))
            await press(pilot, "1")
            texts["copy"] = "\n".join(c.copy_text for c in app.screen.query(FixCard))
            await press(pilot, "c")
            texts["clipboard"] = app.clipboard
            for ext in ("sh", "md", "txt"):
                await press(pilot, "s")
                app.screen.query_one(Input).value = str(save_dir / f"fix.{ext}")
                await press(pilot, "enter")
            await press(pilot, "q")

    run_async(walk)()
    outcome = app.return_value
    assert isinstance(outcome, Outcome)
    out, err = io.StringIO(), io.StringIO()
    print_outcome(outcome, "en", out, err, width=100)
    texts["exit print"] = out.getvalue() + err.getvalue()
    for ext in ("sh", "md", "txt"):
        texts[ext] = (save_dir / f"fix.{ext}").read_text()
    return screens, texts
