"""Languages: every user-facing string in the knowledge base exists in English and Chinese."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

LANGS: tuple[str, ...] = ("en", "zh")
DEFAULT_LANG = "en"


@dataclass(frozen=True)
class Text:
    """One string in every supported language."""

    en: str
    zh: str

    def __call__(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def as_dict(self) -> dict[str, str]:
        return {"en": self.en, "zh": self.zh}

    @classmethod
    def same(cls, s: str) -> Text:
        return cls(s, s)


def detect_lang(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``--lang`` wins; then the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``)."""
    if explicit:
        if explicit not in LANGS:
            raise ValueError(f"unsupported language {explicit!r} (choose from {', '.join(LANGS)})")
        return explicit
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else DEFAULT_LANG
    return DEFAULT_LANG


# Strings the program itself prints (the knowledge base carries its own translations).
UI: dict[str, Text] = {
    "conclusion": Text("Conclusion", "结论"),
    "root_cause": Text("Root cause", "根本原因"),
    "confirmed": Text("confirmed", "已确认"),
    "probable": Text("probable", "可能"),
    "environment": Text("Applies to", "适用环境"),
    "fixes": Text("Fixes, cheapest first", "修复方案（按性能代价从低到高）"),
    "checklist": Text("Verify the fix", "验证清单"),
    "caveats": Text("Caveats", "注意事项"),
    "sources": Text("Sources", "参考来源"),
    "evidence": Text("Evidence", "证据等级"),
    "cost": Text("cost", "代价"),
    "versions": Text("vLLM versions", "vLLM 版本"),
    "path": Text("How we got here", "判断路径"),
    "facts": Text("Facts", "已知事实"),
    "auto_check": Text("checkable automatically", "可自动检查"),
    "not_for_version": Text(
        "not available in vLLM {version} (needs {spec})", "vLLM {version} 不可用（需要 {spec}）"
    ),
    "fill_in": Text("fill in", "请填写"),
    "unknown": Text("unknown", "未知"),
    "evidence.verified": Text("verified", "已验证"),
    "evidence.documented": Text("documented", "有文档"),
    "evidence.untested": Text("untested", "未验证"),
    "cost.none": Text("no throughput cost", "无性能损失"),
    "cost.low": Text("low cost", "代价低"),
    "cost.medium": Text("medium cost", "代价中等"),
    "cost.high": Text("high cost", "代价高"),
    "cost.upgrade": Text("needs an upgrade or patch", "需要升级或打补丁"),
}


def ui(key: str, lang: str, **fmt: object) -> str:
    text = UI[key](lang)
    return text.format(**fmt) if fmt else text
