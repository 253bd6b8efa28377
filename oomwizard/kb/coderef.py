"""``file@version`` references: a claim checked in a released wheel's own source.

Evidence level ``code`` means someone read the code that decides the behaviour in the release that
ships it, so the reference names both: ``vllm/v1/worker/gpu_worker.py@0.11.0`` or
``torch/include/c10/cuda/CUDAAllocatorConfig.h@2.9.1`` (the path inside the wheel). Renderers turn
one into a link to that file at the release's tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_REF_RE = re.compile(
    r"^(?P<path>(?P<project>vllm|torch)/[\w./-]*[\w-]\.(?:py|h|hpp|cpp|cu|cuh))@(?P<version>\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)$"
)
LOOKS_LIKE_CODE_REF_RE = re.compile(r"^[\w./-]+@\S*$")
"""Anything shaped ``something@something`` without a URL scheme: meant as a reference, checked as one."""

_REPOS = {"vllm": "vllm-project/vllm", "torch": "pytorch/pytorch"}


@dataclass(frozen=True)
class CodeRef:
    project: str
    path: str
    version: str

    @property
    def url(self) -> str:
        """The file at the release's tag; a torch wheel's headers live under ``torch/include/``."""
        path = self.path.removeprefix("torch/include/") if self.project == "torch" else self.path
        return f"https://github.com/{_REPOS[self.project]}/blob/v{self.version}/{path}"


def parse_code_ref(text: str) -> CodeRef | None:
    m = CODE_REF_RE.match(text.strip())
    if not m:
        return None
    return CodeRef(m.group("project"), m.group("path"), m.group("version"))


def is_code_ref(text: str) -> bool:
    return parse_code_ref(text) is not None
