"""Who and where a bundle came from, replaced by stable placeholders.

Secrets are redacted in every output already (:mod:`oomwizard.text.redact`). A bundle leaves
the machine, so it also hides what identifies it: hostnames, user names, home folders, IP
addresses, GPU UUIDs and serial numbers. Each distinct value gets one placeholder for the whole
file (``host-1``, ``user-1``, ``192.0.2.1``, ``GPU-00000000-0000-0000-0000-000000000001``), so a
reader can still see that the log's host is the one in the machine report, or that two GPUs
differ. Placeholders keep the shape of what they replace (a path stays a path, an address stays
an address) so the replayed bundle parses the same way, and they are never replaced again.

Discovery runs over every string first (known names, and values in recognisable places: home
paths, ``user@host``, NCCL line prefixes, ``HOSTNAME=``), then one replacement pass applies the
same table everywhere.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Any

KINDS = ("host", "user", "ipv4", "ipv6", "gpu", "serial")

# Values that identify nobody: kept as they are.
_KEEP_HOSTS = {"localhost", "localhost.localdomain", "ip6-localhost", "none", "null", "unknown", "gpu", "node",
               "host", "server", "worker", "master", "main", "vllm", "cuda", "nccl", "info", "warning", "error"}
_KEEP_USERS = {"root", "nobody", "user", "admin", "ubuntu", "vllm", "python", "model", "models", "git", "noreply",
               "serve", "torch", "cuda", "nvidia", "docker", "worker", "test", "home", "shared", "data"}
_PRIVATE_SUFFIXES = (".local", ".internal", ".lan", ".corp", ".cluster", ".svc", ".home", ".localdomain", ".intranet")
_PLACEHOLDER_RE = re.compile(r"^(?:host|user|serial)-\d+$")

_HOME_RE = re.compile(r"(?<![\w.-])(/home|/Users|/export/home|/u)/([A-Za-z_][\w.-]{0,63})(?=/|\b|$)")
_TILDE_RE = re.compile(r"(?<![\w~])~([A-Za-z_][\w.-]{0,31})(?=/)")
_USER_AT_RE = re.compile(r"(?<![\w.@:/-])([A-Za-z_][\w.-]{1,31})@([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63})*)(?![\w-])")
_NCCL_RE = re.compile(r"(?:^|\s|\))([A-Za-z0-9][A-Za-z0-9.-]{0,62}):\d+:\d+\s+\[\d+\]\s+NCCL")
_HOST_KEY_RE = re.compile(r"(?i)\b(?:hostname|host_name|nodename|node_name|HOSTNAME)\s*[=:]\s*['\"]?([A-Za-z0-9][A-Za-z0-9.-]{0,252})")
_USER_KEY_RE = re.compile(r"(?:\b(?:USER|LOGNAME|SUDO_USER)=|(?i:\buser_?name)\s*=\s*)['\"]?([A-Za-z_][\w.-]{0,31})")
_SERIAL_RE = re.compile(r"(?i)(\bserial(?:[ _-]?(?:number|no))?['\"]?\s*[=:]\s*['\"]?)([A-Za-z0-9-]*\d[A-Za-z0-9-]{2,63})")
_GPU_UUID_RE = re.compile(r"(?i)\b(GPU|MIG)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")
_IPV4_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?!\w|\.\d)")
_IPV6_RE = re.compile(r"(?<![\w:.])((?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%\w+)?)(?![\w:])")
_DOC_V4 = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]
_DOC_V6 = ipaddress.ip_network("2001:db8::/32")
_DOC_V4_POOL = [f"{net}.{i}" for net in ("192.0.2", "198.51.100", "203.0.113") for i in range(1, 255)]


def _zero_uuid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


class Identities:
    """The placeholder table of one bundle: discover first, then :meth:`apply` to every string."""

    def __init__(self, hosts: Iterable[str] = (), users: Iterable[str] = ()) -> None:
        self.table: dict[str, dict[str, str]] = {k: {} for k in KINDS}
        self.used: dict[str, set[str]] = {k: set() for k in KINDS}
        """The values :meth:`apply` actually replaced, by kind (what :meth:`counts` reports)."""
        for h in hosts:
            self.host(h)
        for u in users:
            self.user(u)
        self._names_re: re.Pattern[str] | None = None

    # --- discovery ---------------------------------------------------------------------------

    def _add(self, kind: str, value: str, make: Any) -> None:
        if value and value not in self.table[kind]:
            self.table[kind][value] = make(len(self.table[kind]) + 1)
            self._names_re = None

    def host(self, name: str) -> None:
        name = (name or "").strip().rstrip(".")
        if (not name or name.lower() in _KEEP_HOSTS or _PLACEHOLDER_RE.match(name) or _is_ip(name)
                or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.-]*", name) or name.isdigit()):
            return
        self._add("host", name, lambda n: f"host-{n}")
        short = name.split(".", 1)[0]
        if short != name and len(short) >= 3:
            self._add("host", short, lambda n: f"host-{n}")

    def user(self, name: str) -> None:
        name = (name or "").strip()
        if not name or name.lower() in _KEEP_USERS or _PLACEHOLDER_RE.match(name) or len(name) < 2:
            return
        self._add("user", name, lambda n: f"user-{n}")

    def discover(self, text: str) -> None:
        """Note the identities ``text`` shows in recognisable places."""
        for m in _HOME_RE.finditer(text):
            self.user(m.group(2))
        for m in _TILDE_RE.finditer(text):
            self.user(m.group(1))
        for m in _USER_AT_RE.finditer(text):  # ssh-style user@host; a public domain stays (git@github.com)
            host = m.group(2)
            if "." not in host or host.lower().endswith(_PRIVATE_SUFFIXES) or host in self.table["host"]:
                self.user(m.group(1))
                self.host(host)
        for m in _NCCL_RE.finditer(text):
            self.host(m.group(1))
        for m in _HOST_KEY_RE.finditer(text):
            self.host(m.group(1))
        for m in _USER_KEY_RE.finditer(text):
            self.user(m.group(1))
        for m in _SERIAL_RE.finditer(text):
            if not _PLACEHOLDER_RE.match(m.group(2)):
                self._add("serial", m.group(2), lambda n: f"serial-{n}")
        for m in _GPU_UUID_RE.finditer(text):
            u = m.group(2).lower()
            if not u.startswith("00000000-0000-0000-0000-"):
                self._add("gpu", u, _zero_uuid)
        for m in _IPV4_RE.finditer(text):
            self._ip(m.group(1))
        for m in _IPV6_RE.finditer(text):
            self._ip(m.group(1))

    def _ip(self, raw: str) -> None:
        try:
            ip = ipaddress.ip_address(raw.split("%", 1)[0])
        except ValueError:
            return
        if ip.is_loopback or ip.is_unspecified or ip.is_multicast or ip.is_reserved:
            return
        if ip.version == 4:
            if any(ip in n for n in _DOC_V4):
                return
            self._add("ipv4", raw, lambda n: _DOC_V4_POOL[(n - 1) % len(_DOC_V4_POOL)])
        else:
            if ip in _DOC_V6:
                return
            self._add("ipv6", raw, lambda n: f"2001:db8::{n:x}")

    def discover_data(self, data: Any) -> None:
        for s in _strings(data):
            self.discover(s)

    # --- replacement -------------------------------------------------------------------------

    def _pattern(self) -> re.Pattern[str]:
        if self._names_re is None:
            words = {**self.table["host"], **self.table["user"], **self.table["serial"]}
            alts = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or r"(?!x)x"
            self._names_re = re.compile(rf"(?<![\w-])(?:{alts})(?![\w-])")
        return self._names_re

    def apply(self, text: str) -> str:
        """``text`` with every known identity replaced by its placeholder."""
        if not text:
            return text
        text = _GPU_UUID_RE.sub(lambda m: f"{m.group(1)}-{self._swap('gpu', m.group(2).lower(), m.group(2))}", text)
        text = _IPV6_RE.sub(lambda m: self._swap("ipv6", m.group(1)), text)
        text = _IPV4_RE.sub(lambda m: self._swap("ipv4", m.group(1)), text)
        if any(self.table[k] for k in ("host", "user", "serial")):
            text = self._pattern().sub(self._replace_match, text)
        return text

    def _replace_match(self, m: re.Match[str]) -> str:
        word = m.group(0)
        if word in self.table["user"] and word not in self.table["host"] and not _user_context(m.string, m.start(), m.end()):
            return word  # a path segment such as sample/ops/ is not the user "ops"
        return self._word(word)

    def _swap(self, kind: str, key: str, default: str | None = None) -> str:
        new = self.table[kind].get(key)
        if new is None:
            return key if default is None else default
        self.used[kind].add(key)
        return new

    def _word(self, word: str) -> str:
        for kind in ("host", "user", "serial"):
            if word in self.table[kind]:
                return self._swap(kind, word)
        return word

    def apply_data(self, data: Any) -> Any:
        """JSON-like ``data`` with :meth:`apply` run over every string (keys too: env names stay)."""
        if isinstance(data, dict):
            return {(self.apply(k) if isinstance(k, str) else k): self.apply_data(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.apply_data(v) for v in data]
        if isinstance(data, str):
            return self.apply(data)
        return data

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced."""
        return {k: len(v) for k, v in self.used.items() if v}


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _strings(data: Any) -> Iterable[str]:
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(k, str):
                yield k
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v)
    elif isinstance(data, str):
        yield data


def local_identities() -> tuple[list[str], list[str]]:
    """This machine's host names and the current user, to hide even where no pattern shows them."""
    import contextlib
    import getpass
    import os
    import socket

    hosts: list[str] = []
    users: list[str] = []
    try:
        name = socket.gethostname()
        hosts.append(name)
    except OSError:
        pass
    if os.environ.get("HOSTNAME"):
        hosts.append(os.environ["HOSTNAME"])
    for var in ("USER", "LOGNAME", "SUDO_USER"):
        if os.environ.get(var):
            users.append(os.environ[var])
    with contextlib.suppress(KeyError, OSError):
        users.append(getpass.getuser())
    return hosts, users


_HOME_PARENTS = ("home", "Users", "users")


def _user_context(text: str, start: int, end: int) -> bool:
    """Whether a user name found at ``text[start:end]`` stands where a user name goes: a word of
    its own, or a home folder (``/home/NAME``, ``~NAME``), not a segment inside another path."""
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if before == "/":
        parent = text[:start - 1].rsplit("/", 1)[-1]
        return parent in _HOME_PARENTS
    if before == "~":
        return True
    return after != "/"
