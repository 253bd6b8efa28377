"""No planted secret or identity reaches a bundle in any format; identities map consistently.

Secrets come from the shared plant (shell environment, two running servers' argv, environ and
``--config``, the log). Identities (a host name, a user name and their home folder, IPv4 and IPv6
addresses, a GPU UUID and a board serial) are planted in the log, in a third running server's
command line and environment, and in a saved machine report.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "machine"))

from fake_proc import add_process
from plant import SECRETS, cli, fake_proc, leaks, secrets_log, shell_env
from schemas import validate_output

from oomwizard.bundle.identity import Identities

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"

HOST = "gpu-node-17.cluster.example"
SHORT = "gpu-node-17"
USER = "alicewong"
IPV4 = "10.20.30.40"
IPV6 = "fd00:1234:5678::17"
UUID = "GPU-3f2a9c1e-7b4d-4e8a-9c2b-1d2e3f4a5b6c"
SERIAL = "1652020012345"
IDENTITIES = {"host": HOST, "short host": SHORT, "user": USER, "ipv4": IPV4, "ipv6": IPV6,
              "uuid": UUID[4:], "serial": SERIAL}


def identity_leaks(text: str) -> dict[str, int]:
    return {k: n for k, v in IDENTITIES.items() if (n := len(re.findall(re.escape(v), text, re.I)))}


def _log(path: Path) -> Path:
    secrets_log(path)
    lines = path.read_text().splitlines()
    out = []
    for line in lines:
        out.append(line.replace("'host': '0.0.0.0'", f"'host': '{IPV4}'"))
        if "Resolved architecture" in line:
            p = "(EngineCore_DP0 pid=48213) INFO 10-14 09:12:20"
            out += [
                f"{SHORT}:48213:48213 [0] NCCL INFO Bootstrap : Using eth0:{IPV4}<0>",
                f"{p} [utils.py:1] hostname={HOST} user {USER} cwd /home/{USER}/work listening on [{IPV6}]:8000",
                f"{p} [utils.py:2] device {UUID} board serial: {SERIAL} ssh {USER}@{HOST}",
            ]
    path.write_text("\n".join(out) + "\n")
    return path


def _machine(path: Path) -> Path:
    data = json.loads(DEMO_MACHINE.read_text())
    data["gpus"][0]["uuid"] = UUID
    data["env"] = {**data.get("env", {}), "HOSTNAME": HOST, "CUDA_VISIBLE_DEVICES": UUID, "HOME": f"/home/{USER}"}
    for i in data.get("interpreters") or []:
        i["path"] = f"/home/{USER}/venv/bin/python"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("planted")
    proc = fake_proc(d / "proc")
    add_process(proc, 4500, ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                             f"/home/{USER}/models/llama", "--host", IPV4, "--api-key", SECRETS["s1_api_key"]],
                environ={"PATH": "/nonexistent", "HOSTNAME": HOST, "CUDA_VISIBLE_DEVICES": UUID, "USER": USER})
    return {"dir": d, "proc": proc, "log": _log(d / "id.log"), "machine": _machine(d / "machine.json")}


def _report(planted: dict[str, Path], *args: str, machine: bool = True) -> tuple[str, str]:
    env = {**shell_env(), "OOMWIZARD_PROC_ROOT": str(planted["proc"]), "HOSTNAME": HOST, "USER": USER}
    extra = ["--machine", str(planted["machine"])] if machine else []
    r = cli("report", "--log", str(planted["log"]), *extra, *args, env=env, cwd=planted["dir"])
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
    return r.stdout.decode(), r.stderr.decode()


def test_the_plant_is_in_the_inputs(planted: dict[str, Path]) -> None:
    held = planted["log"].read_text() + planted["machine"].read_text()
    assert set(identity_leaks(held)) == set(IDENTITIES)
    assert len(leaks(planted["log"].read_text())) >= 20


@pytest.mark.parametrize("fmt", ["markdown", "json", "html"])
@pytest.mark.parametrize("machine", [True, False], ids=["saved machine", "detected with running servers"])
def test_no_secret_and_no_identity_in_any_format(planted: dict[str, Path], fmt: str, machine: bool) -> None:
    out, err = _report(planted, "--format", fmt, machine=machine)
    assert leaks(out + err) == {}
    assert identity_leaks(out) == {}
    assert "--host 192.0.2." in out  # the commands carry the placeholder, not the address
    if fmt == "json":
        assert "host-" in out and "user-" in out and "2001:db8::" in out and "serial-" in out
        doc = json.loads(out)
        validate_output(doc)
        assert doc["redaction"]["identities"] and doc["redaction"]["replaced"]["host"] >= 1
        if not machine:  # the planted server was read, and reached the bundle only as placeholders
            servers = doc["machine"]["processes"]["servers"]
            assert any("/home/user-" in str(s.get("command")) and "--host 192.0.2." in str(s.get("command"))
                       for s in servers), servers


def test_the_same_identity_gets_the_same_placeholder_everywhere(planted: dict[str, Path]) -> None:
    doc = json.loads(_report(planted, "--format", "json")[0])
    log_text = json.dumps(doc["log"])
    machine_text = json.dumps(doc["machine"])
    uuid_ph = "GPU-00000000-0000-0000-0000-000000000001"
    assert uuid_ph in log_text and uuid_ph in machine_text
    host_ph = re.search(r"hostname=(host-\d+)", log_text).group(1)  # type: ignore[union-attr]
    assert f'"HOSTNAME": "{host_ph}"' in machine_text
    user_ph = re.search(r"/home/(user-\d+)/work", log_text).group(1)  # type: ignore[union-attr]
    assert f"/home/{user_ph}/venv/bin/python" in machine_text and f"{user_ph}@{host_ph}" in log_text
    ip_ph = doc["facts"]["serve_command"]["value"].split("--host ")[1].split()[0]
    assert ip_ph.startswith("192.0.2.") and f"eth0:{ip_ph}" in log_text
    assert any(f"--host {ip_ph}" in v["command"] for f in doc["leaf"]["fixes"] for v in f["variants"])


def test_no_redact_keeps_identities_hides_secrets_and_warns(planted: dict[str, Path]) -> None:
    out, err = _report(planted, "--no-redact")
    assert HOST in out and IPV4 in out and f"/home/{USER}" in out
    assert leaks(out) == {}
    assert "--no-redact" in err and "share" in err
    env = {**shell_env(), "LANG": "zh_CN.UTF-8"}
    r = cli("report", "--machine", str(planted["machine"]), "--no-redact", env=env, cwd=planted["dir"])
    assert r.returncode == 0 and "分享前请检查" in r.stderr.decode()


def test_placeholders_are_stable_and_never_replaced_again() -> None:
    text = f"{USER}@{HOST} {IPV4} {IPV4} {UUID} 127.0.0.1 0.0.0.0 ::1 192.0.2.7 localhost root"
    ids = Identities()
    ids.discover(text)
    once = ids.apply(text)
    assert once.count("192.0.2.1") == 2 and "127.0.0.1 0.0.0.0 ::1 192.0.2.7 localhost root" in once
    again = Identities()
    again.discover(once)
    assert again.apply(once) == once and again.counts() == {}


def test_versions_timestamps_and_flags_are_not_addresses() -> None:
    text = "vllm 0.11.0 torch 2.9.1+cu128 at 10-14 09:12:07 --gpu-memory-utilization 0.97 1.2.3.4.5 sm_90"
    ids = Identities(hosts=["gpu"], users=["vllm"])
    ids.discover(text)
    assert ids.apply(text) == text


def test_the_wizards_bundle_holds_no_secret_or_identity(planted: dict[str, Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from oomwizard.bundle.build import BundleInput
    from oomwizard.bundle.frontend import write_walk_bundle
    from oomwizard.facts.saved import load_report
    from oomwizard.kb.loader import get_kb
    from oomwizard.logs.diagnose import diagnose_paths

    for k, v in shell_env().items():
        monkeypatch.setenv(k, v)
    report = load_report(str(planted["machine"]))
    diag = diagnose_paths([str(planted["log"])])
    facts = report.facts
    facts.update(diag.facts)
    w = BundleInput(get_kb(), "en", diagnosis=diag, machine=report.data, machine_source="file", facts=facts,
                    log_paths=[str(planted["log"])])
    paths = write_walk_bundle(w, tmp_path)
    assert len(paths) == 2
    for p in paths:
        text = Path(p).read_text()
        assert leaks(text) == {} and identity_leaks(text) == {}, p
    doc = json.loads(Path(paths[0]).read_text())
    validate_output(doc)
    assert doc["log"]["replays_same"] and "host-" in json.dumps(doc["log"])


def test_prose_public_domains_and_cxx_names_are_not_identities() -> None:
    text = ("the user: please lower it; serial number: unknown; git@github.com:org/repo; "
            "c10::Error at 12:00:01; see https://docs.vllm.ai/en/latest/")
    ids = Identities()
    ids.discover(text)
    assert ids.apply(text) == text and ids.counts() == {}
    text = "ssh bob@gpu7 USER=carol username=dave serial: 1652020012345 node7.cluster"
    ids.discover(text)
    assert ids.apply(text) == "ssh user-1@host-1 USER=user-2 username=user-3 serial: serial-1 node7.cluster"


def test_a_user_name_that_is_also_a_path_segment_is_kept_inside_other_paths() -> None:
    from oomwizard.bundle.identity import Identities

    ids = Identities()
    ids.discover("Using cache directory: /home/ops/.cache/vllm")
    out = ids.apply("cache /home/ops/.cache; source vllm/v1/sample/ops/topk_topp_sampler.py@0.17.0; ~ops/x; user ops ran it")
    assert "/home/user-1/.cache" in out and "~user-1/x" in out and "user user-1 ran it" in out
    assert "vllm/v1/sample/ops/topk_topp_sampler.py@0.17.0" in out
