"""The onboarding screens' and pages' own words, in both languages, registered with the UI table."""

from __future__ import annotations

from ..i18n import UI, Text

TEXTS: dict[str, Text] = {
    "tui.welcome.browse": Text("Browse every failure", "浏览所有失败场景"),
    "tui.welcome.browse_hint": Text("no failure at hand: learn them all", "手头没有故障：了解所有场景"),
    "tui.welcome.tour": Text("Take the guided tour", "跟随导览"),
    "tui.welcome.tour_hint": Text("the demo, explained step by step", "逐步讲解演示"),
    "onboard.browse": Text("Browse", "浏览"),
    "onboard.filter": Text("Filter: text, flag, variable, model, GPU, or paste an error line",
                           "筛选：文字、参数、变量、模型、GPU，或粘贴一行报错"),
    "onboard.count": Text("{n} of {total} scenarios", "{total} 个场景中的 {n} 个"),
    "onboard.by_diagnosis": Text("matched by the log diagnosis", "由日志诊断匹配"),
    "onboard.none": Text("Nothing matches.", "没有匹配项。"),
    "onboard.step": Text("Fails at", "失败步骤"),
    "onboard.messages": Text("What you read in the log", "日志中能看到的内容"),
    "onboard.leaves": Text("Leaves", "结论"),
    "onboard.terms": Text("Terms", "术语"),
    "onboard.kind.error": Text("error", "错误"),
    "onboard.kind.log": Text("log line", "日志行"),
    "onboard.kind.torch": Text("PyTorch", "PyTorch"),
    "onboard.open_leaf": Text("open leaf", "打开结论"),
    "onboard.start_wizard": Text("start wizard here", "从这里开始向导"),
    "onboard.glossary": Text("Glossary", "术语表"),
    "onboard.glossary_here": Text("terms on this screen", "本屏中的术语"),
    "onboard.flags": Text("Flags", "参数"),
    "onboard.env": Text("Variables", "环境变量"),
    "onboard.log": Text("Log lines", "日志行"),
    "onboard.related": Text("See also", "另见"),
    "onboard.used_by": Text("Used by", "相关结论"),
    "onboard.checked_in": Text("Checked in", "核对于"),
    "onboard.memory": Text("How vLLM spends GPU memory", "vLLM 如何使用显存"),
    "onboard.timeline": Text("Start-up timeline", "启动时间线"),
    "onboard.budget": Text("The budget", "预算"),
    "onboard.budget_from": Text("numbers from {source}", "数字来自 {source}"),
    "onboard.budget_none": Text("No numbers yet: open a log or detect this machine to draw your own budget.",
                                "还没有数字：打开日志或检测本机，即可画出你自己的预算。"),
    "onboard.tour": Text("Guided tour", "导览"),
    "onboard.tour_step": Text("Step {n} of {total}", "第 {n} 步，共 {total} 步"),
    "onboard.tour_verify": Text("Check it yourself", "自己验证"),
    "onboard.tour_keys": Text("Enter/→ next · ← back · s skip the tour", "Enter/→ 下一步 · ← 上一步 · s 跳过导览"),
    "onboard.next": Text("next", "下一步"),
    "onboard.prev": Text("back", "上一步"),
    "onboard.skip": Text("skip", "跳过"),
    "onboard.search": Text("Search", "搜索"),
    "onboard.search_hint": Text("Type words or paste an error line", "输入文字或粘贴一行报错"),
    "onboard.copy": Text("Copy", "复制"),
    "onboard.copied": Text("Copied", "已复制"),
    "onboard.all_scenarios": Text("All scenarios", "所有场景"),
    "onboard.outside_budget": Text("outside the budget", "预算之外"),
    "onboard.derived": Text("derived: the rest of the budget", "推算：预算的其余部分"),
}

UI.update({k: v for k, v in TEXTS.items() if k not in UI})


def t(key: str, lang: str, **fmt: object) -> str:
    text = TEXTS[key](lang)
    return text.format(**fmt) if fmt else text
