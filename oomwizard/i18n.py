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
    "progress.known": Text("reading {name}: {done} of {total} ({pct} %), about {left} s left",
                           "正在读取 {name}：{done} / {total}（{pct} %），约剩 {left} 秒"),
    "progress.unknown": Text("reading {name}: {done}", "正在读取 {name}：{done}"),
    "follow.waiting": Text("following {name}: the diagnosis is printed when the engine dies (Ctrl+C to diagnose now)",
                           "正在跟踪 {name}：引擎退出时打印诊断（按 Ctrl+C 立即诊断）"),
    "follow.earlier": Text("{name} already holds {count} error(s), the last at line {line}; waiting for a new one",
                           "{name} 中已有 {count} 个错误（最后一个在第 {line} 行）；正在等待新的错误"),
    "follow.died": Text("the engine died ({where}); diagnosing what was read", "引擎已退出（{where}）；正在诊断已读取的内容"),
    "follow.ended": Text("{name} ended; diagnosing what was read", "{name} 已结束；正在诊断已读取的内容"),
    "interrupted": Text("interrupted while reading {name}", "读取 {name} 时被中断"),
    "verify.title": Text("Checking the fix", "检查修复结果"),
    "verify.ready": Text("The server finished starting ({where}).", "服务已完成启动（{where}）。"),
    "verify.not_ready": Text(
        "The log ends before the server was ready: what is absent from it proves little.",
        "日志在服务就绪之前就结束了：其中“没有出现”的内容说明不了什么。",
    ),
    "verify.reason.still_there": Text("the log still shows it", "日志中仍然出现"),
    "verify.reason.missing": Text("not in the log", "日志中没有出现"),
    "verify.reason.not_ready": Text("the log ends before the server was ready", "日志在服务就绪之前就结束了"),
    "verify.reason.no_fact": Text("the log does not say ({arg})", "日志中没有相关信息（{arg}）"),
    "verify.reason.false": Text("not true in the new log: {arg}", "新日志中不成立：{arg}"),
    "verify.pass": Text("passed", "通过"),
    "verify.fail": Text("FAILED", "未通过"),
    "verify.unproven": Text("not proven yet", "尚未证实"),
    "verify.unknown": Text("cannot tell from this log", "无法从该日志判断"),
    "verify.manual": Text("check this yourself", "需要人工检查"),
    "verify.summary_failed": Text(
        "The fix did not work yet: see the failed items above.", "修复尚未生效：见上面未通过的项目。"
    ),
    "verify.summary_proven": Text(
        "Every automatic check passed. Tick the remaining items yourself.", "所有自动检查均已通过。其余项目请人工确认。"
    ),
    "verify.summary_unproven": Text(
        "Nothing failed, but this log does not prove the fix yet (let the server finish starting, or check by hand).",
        "没有失败项，但该日志还不能证明修复有效（等服务完全启动后再检查，或人工确认）。",
    ),
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
    "cmd.other_flags": Text("plus your other flags", "加上你原有的其他参数"),
    "cmd.remove": Text("; remove {flags}", "；去掉 {flags}"),
    "cmd.secret_vars": Text(
        "before running: export {names} (the command reads your secrets from them; their values are not shown here)",
        "运行前：export {names}（命令从这些变量读取你的密钥；这里不显示其值）",
    ),
    "verify_hint": Text(
        "After the restart, `oomwizard verify {leaf} NEW.LOG` ticks the automatic checks against the new log.",
        "重启之后，运行 `oomwizard verify {leaf} NEW.LOG` 即可用新日志自动核对可自动检查的项目。",
    ),
    "not_for_version": Text(
        "not available in vLLM {version} (needs {spec})", "vLLM {version} 不可用（需要 {spec}）"
    ),
    "cmd.variant_unknown": Text(
        "vLLM version not known (vllm --version tells); the spellings for other releases are commented out below",
        "vLLM 版本未知（vllm --version 可查）；其他版本的写法已在下面注释掉",
    ),
    "runthis.heading": Text("Run this: fix {n}, {title} ({cost})", "先运行：方案 {n}，{title}（{cost}）"),
    "runthis.verify": Text(
        "After the restart, check the new log (the other fixes and the checklist are above):",
        "重启之后，用新日志检查（其他方案和验证清单见上文）：",
    ),
    "runthis.checklist": Text(
        "After the restart, go through the checklist above.", "重启之后，逐项核对上面的验证清单。"
    ),
    "fill_in": Text("fill in", "请填写"),
    "unknown": Text("unknown", "未知"),
    "evidence.verified": Text("verified", "已验证"),
    "evidence.code": Text("checked in source", "已核对源码"),
    "evidence.documented": Text("documented", "有文档"),
    "evidence.untested": Text("untested", "未验证"),
    "cost.none": Text("no throughput cost", "无性能损失"),
    "cost.low": Text("low cost", "代价低"),
    "cost.medium": Text("medium cost", "代价中等"),
    "cost.high": Text("high cost", "代价高"),
    "cost.upgrade": Text("needs an upgrade or patch", "需要升级或打补丁"),
    # --- saved shell script (report/script.py) ---
    "script.usage": Text(
        "The fixes below are alternatives, cheapest first. Running this file changes nothing: "
        "`sh FILE` lists the fixes, `sh FILE 2` runs fix 2 (read it first).",
        "下面的修复方案互为替代，按代价从低到高排列。直接运行本文件不会做任何改动："
        "`sh 文件名` 列出方案，`sh 文件名 2` 运行第 2 个方案（请先读一遍）。",
    ),
    "script.menu": Text("Fixes (run one: sh THIS_FILE NUMBER):", "修复方案（运行其一：sh 本文件 编号）："),
    "script.edit_first": Text("oomwizard: edit fix {n} first: {reason}", "oomwizard：请先编辑方案 {n}：{reason}"),
    "script.delete_line": Text("delete this line once edited", "编辑完成后删除此行"),
    "script.uncomment": Text(
        "then uncomment the commands below", "然后取消下面命令的注释"
    ),
    "script.pick_variant": Text(
        "keep only the spelling for your vLLM version", "只保留与你的 vLLM 版本对应的写法"
    ),
    "script.redacted": Text(
        "a secret was hidden as <redacted> in this command; put your own value back",
        "此命令中的一个密钥已被隐藏为 <redacted>；请填回你自己的值",
    ),
    "script.partial_serve": Text(
        "the vllm serve line holds only the flags this fix changes; add the rest of your command line",
        "vllm serve 这一行只包含本方案改动的参数；请补上你原来命令行的其余部分",
    ),
    # --- interactive frontends (tui/, plain.py) ---
    "tui.title": Text("vLLM out-of-memory wizard", "vLLM 显存不足排障向导"),
    "tui.selection_copied": Text(
        "Selected text ({lines} line(s)) sent to the clipboard through the terminal ({via}); Ctrl+C with nothing "
        "selected quits.",
        "选中的文本（{lines} 行）已通过终端（{via}）发送到剪贴板；未选中任何内容时 Ctrl+C 退出。",
    ),
    "tui.keys": Text("Keys", "按键"),
    "tui.keys.title": Text("Keys", "按键说明"),
    "tui.keys.here": Text("On this screen", "本屏幕"),
    "tui.keys.everywhere": Text("Everywhere", "所有屏幕"),
    "tui.keys.tab": Text("Tab S-Tab|move to the next or previous item (each fix, button, box)",
                         "Tab S-Tab|移到下一个或上一个项目（每个方案、按钮、输入框）"),
    "tui.keys.arrows": Text("↑↓ PgUp PgDn|scroll (Home and End: top and bottom); 1-4 switch tabs on the fix",
                            "↑↓ PgUp PgDn|滚动（Home、End：顶部和底部）；在修复页 1-4 切换标签页"),
    "tui.keys.lists": Text("j k ⏎|down, up and choose in lists; b or Esc goes back (Esc in a text box)",
                           "j k ⏎|在列表中下移、上移、选择；b 或 Esc 返回（在输入框中用 Esc）"),
    "tui.keys.select": Text("mouse, Ctrl+C|drag to select text, Ctrl+C copies it (with nothing selected it quits)",
                            "鼠标, Ctrl+C|拖动选中文本，Ctrl+C 复制（未选中时退出）"),
    "tui.keys.palette": Text("Ctrl+P|every action of this screen by name", "Ctrl+P|按名称查找本屏幕的所有操作"),
    "tui.keys.keys": Text("? F1|this list (on a question, ? explains the question; F2 shows this list)",
                          "? F1|本列表（在问题页，? 解释该问题；F2 显示本列表）"),
    "tui.keys.quit": Text("q Ctrl+Q|quit (the fix is printed to the terminal)", "q Ctrl+Q|退出（修复方案会打印到终端）"),
    "tui.accept_all.done": Text(
        "Accepted {n} suggestion(s); stopped at “{question}”: nothing detected answers it, so choose yourself.",
        "已采用 {n} 条建议；停在“{question}”：没有检测到可回答它的信息，请自行选择。",
    ),
    "tui.accept_all.none": Text(
        "Nothing to accept here: nothing detected answers “{question}”.", "这里没有可采用的建议：没有检测到可回答“{question}”的信息。"
    ),
    "tui.keys.submit": Text("⏎ Ctrl+S|Enter submits a one-line box; Ctrl+S submits any box, the paste box too",
                            "⏎ Ctrl+S|回车提交单行输入框；Ctrl+S 提交任何输入框，包括粘贴框"),
    "tui.facts.add": Text("Set a fact", "设置事实"),
    "tui.yes": Text("yes", "是"),
    "tui.no": Text("no", "否"),
    "tui.quit": Text("Quit", "退出"),
    "tui.back": Text("Back", "返回"),
    "tui.watch": Text("Watch log", "跟踪日志"),
    "tui.help": Text("Why we ask", "为什么问"),
    "tui.facts": Text("Facts", "事实"),
    "tui.copy": Text("Copy", "复制"),
    "tui.plan": Text("Plan", "规划"),
    "tui.save": Text("Save", "保存"),
    "tui.cancel": Text("Cancel", "取消"),
    "tui.accept_all": Text("Accept all suggestions", "全部采用建议"),
    "tui.choose": Text("Choose", "选择"),
    "tui.continue": Text("Continue", "继续"),
    "tui.welcome.lead": Text(
        "vLLM stopped with “CUDA out of memory”? Show me the log and I will tell you why, and which "
        "commands fix it on this machine. Nothing is ever run for you.",
        "vLLM 因 “CUDA out of memory” 退出？给我日志，我会告诉你原因，以及在这台机器上修复它的命令。"
        "不会替你执行任何命令。",
    ),
    "tui.welcome.open_log": Text("Open a log file", "打开日志文件"),
    "tui.welcome.open_log_hint": Text(
        "vllm.log, journalctl or kubectl output; .gz is fine", "vllm.log、journalctl 或 kubectl 的输出；支持 .gz"
    ),
    "tui.welcome.paste": Text("Paste a log", "粘贴日志"),
    "tui.welcome.paste_hint": Text("copied from another window", "从其他窗口复制的内容"),
    "tui.welcome.detect": Text("Detect this machine", "检测本机"),
    "tui.welcome.detect_hint": Text(
        "GPUs, vLLM and PyTorch versions, allocator settings", "GPU、vLLM 与 PyTorch 版本、分配器设置"
    ),
    "tui.welcome.questions": Text("Just answer questions", "直接回答问题"),
    "tui.welcome.questions_hint": Text("no log at hand", "手头没有日志"),
    "tui.welcome.demo": Text("Try the demo", "试用演示"),
    "tui.welcome.demo_hint": Text("a bundled log and machine", "内置的示例日志和机器"),
    "tui.welcome.no_gpu": Text(
        "No NVIDIA GPU was found here and no log was given: the demo shows what the wizard does.",
        "本机没有检测到 NVIDIA GPU，也没有提供日志：可以先用演示看看向导能做什么。",
    ),
    "tui.welcome.path_placeholder": Text("path/to/vllm.log", "日志路径，例如 path/to/vllm.log"),
    "tui.welcome.path_help": Text(
        "Enter reads the file · Tab or → completes the name · Esc cancels", "回车读取文件 · Tab 或 → 补全文件名 · Esc 取消"
    ),
    "tui.path.empty": Text("Type the path of a log file.", "请输入日志文件路径。"),
    "tui.path.missing": Text("No such file: {path}", "文件不存在：{path}"),
    "tui.path.dir": Text("{path} is a folder; give a log file.", "{path} 是文件夹；请给出日志文件。"),
    "tui.path.unreadable": Text("Cannot read {path}: {error}", "无法读取 {path}：{error}"),
    "tui.path.special": Text(
        "{path} is a device or a named pipe, not a log file; save the log to a file first.",
        "{path} 是设备或命名管道，不是日志文件；请先把日志保存为文件。",
    ),
    "tui.machine.label": Text("This machine", "本机"),
    "tui.machine.detecting": Text("reading GPUs, packages and environment…", "正在读取 GPU、软件包和环境…"),
    "tui.machine.failed": Text("could not be read: {error}", "读取失败：{error}"),
    "tui.machine.no_gpu": Text("no NVIDIA GPU readable (NVML unavailable)", "无法读取 NVIDIA GPU（NVML 不可用）"),
    "tui.machine.replayed": Text("from {file}", "来自 {file}"),
    "tui.machine.redetect": Text("Detect again", "重新检测"),
    "tui.reading": Text("Reading {what}…", "正在读取 {what}…"),
    "tui.read_mib": Text("{mib} MiB read", "已读取 {mib} MiB"),
    "tui.read_failed": Text("Could not read the log: {error}", "无法读取日志：{error}"),
    "tui.paste.title": Text("Paste the log", "粘贴日志"),
    "tui.paste.help": Text(
        "Paste with your terminal's paste key, then Ctrl+S to diagnose · Esc cancels",
        "用终端的粘贴快捷键粘贴，然后按 Ctrl+S 诊断 · Esc 取消",
    ),
    "tui.paste.empty": Text("Nothing pasted yet.", "还没有粘贴任何内容。"),
    "tui.paste.go": Text("Diagnose", "诊断"),
    "tui.diag.title": Text("Diagnosis", "诊断结果"),
    "tui.diag.inputs": Text("Read: {inputs}", "已读取：{inputs}"),
    "tui.diag.scenarios": Text("What this looks like, best match first", "最可能的场景（按匹配度排序）"),
    "tui.diag.none": Text(
        "No known out-of-memory failure was recognised in this input. The questions still lead to a fix.",
        "未在输入中识别出已知的显存不足故障。回答问题仍然可以找到修复方案。",
    ),
    "tui.diag.reasons": Text("Why", "依据"),
    "tui.diag.evidence": Text("Evidence in the log", "日志中的证据"),
    "tui.diag.log_facts": Text("Read from the log", "从日志读出的信息"),
    "tui.diag.warnings": Text("About the input", "关于输入"),
    "tui.diag.continue": Text("Continue with this", "以此继续"),
    "tui.q.progress": Text("Question {n} of about {total}", "第 {n} 题，共约 {total} 题"),
    "tui.q.suggested": Text("suggested", "建议"),
    "tui.q.suggestion": Text("Suggested: {answer} — from {source}. Enter accepts it.", "建议：{answer} — 来自 {source}。回车采用。"),
    "tui.q.no_suggestion": Text(
        "Nothing detected answers this. Choose what fits; “Not sure” is a fine answer.",
        "没有检测到可回答此题的信息。请选择符合的选项；“不确定” 也可以。",
    ),
    "tui.q.version_placeholder": Text("e.g. 0.11.0", "例如 0.11.0"),
    "tui.q.version_help": Text("Enter accepts · Tab then Enter: don't know", "回车确认 · Tab 再回车：不知道"),
    "tui.q.dont_know": Text("Don't know", "不知道"),
    "tui.q.bad_version": Text("“{value}” is not a version like 0.11.0.", "“{value}” 不是形如 0.11.0 的版本号。"),
    "tui.q.start": Text("Start", "开始"),
    "tui.help.none": Text("No explanation has been written for this question yet.", "这个问题还没有说明。"),
    "tui.facts.title": Text("Everything known so far", "目前已知的全部信息"),
    "tui.facts.help": Text(
        "Enter changes the highlighted value · n sets another fact · b or Esc goes back",
        "回车修改选中的值 · n 设置其他事实 · b 或 Esc 返回",
    ),
    "tui.facts.name": Text("Fact", "事实"),
    "tui.facts.value": Text("Value", "值"),
    "tui.facts.source": Text("Source", "来源"),
    "tui.facts.none": Text("Nothing is known yet.", "目前还没有任何已知信息。"),
    "tui.facts.edit": Text("New value for {title} ({name}, {type})", "{title}（{name}，{type}）的新值"),
    "tui.facts.other": Text("also: {others}", "其他来源：{others}"),
    "tui.facts.new_name": Text("Fact name, e.g. max_num_seqs", "事实名称，例如 max_num_seqs"),
    "tui.facts.unknown_name": Text("There is no fact called “{name}”.", "没有名为 “{name}” 的事实。"),
    "tui.facts.set": Text("{name} = {value} (your answer now beats the log and the machine)", "{name} = {value}（你的答案优先于日志和检测结果）"),
    "tui.leaf.tab.fix": Text("Fix", "修复"),
    "tui.leaf.tab.checklist": Text("Checklist", "验证清单"),
    "tui.leaf.tab.details": Text("Details", "详情"),
    "tui.leaf.tab.article": Text("Article", "文章"),
    "tui.leaf.never_run": Text(
        "Nothing is run for you: copy (c) or save (s) the commands, read them, run them yourself.",
        "不会替你执行任何命令：复制（c）或保存（s）命令，读过之后自己运行。",
    ),
    "tui.leaf.numbers": Text("Where the numbers come from", "数值的由来"),
    "tui.leaf.more": Text("more under 3 Details", "详见 3 详情"),
    "tui.leaf.copied": Text(
        "Fix {n} sent to the clipboard through the terminal ({via}). Nothing arrived? Press s to save it; "
        "it is also printed when you quit.",
        "方案 {n} 已通过终端（{via}）发送到剪贴板。没有收到？按 s 保存；退出时也会打印出来。",
    ),
    "tui.leaf.copied_tmux": Text(
        "Fix {n} is in tmux's paste buffer (prefix ] pastes it); tmux also passes it on to your "
        "terminal's clipboard where its set-clipboard option allows.",
        "方案 {n} 已放入 tmux 粘贴缓冲区（prefix ] 粘贴）；若 tmux 的 set-clipboard 选项允许，也会转发到终端剪贴板。",
    ),
    "tui.runthis.verify": Text("After the restart, press v or run", "重启之后，按 v 或运行"),
    "tui.runthis.keys": Text(
        "c copies it · Tab moves to each fix below (c copies that one) · ↑↓ PgUp PgDn scroll · ? keys",
        "c 复制它 · Tab 逐个选中下面的方案（c 复制所选方案） · ↑↓ PgUp PgDn 滚动 · ? 按键说明",
    ),
    "tui.leaf.no_commands": Text("This fix has no commands to copy.", "这个方案没有可复制的命令。"),
    "tui.leaf.not_copied": Text(
        "Nothing copied: fix {n} is {why}.", "未复制：方案 {n} {why}。"
    ),
    "tui.leaf.auto_checked": Text("checkable automatically", "可自动检查"),
    "tui.leaf.facts_changed": Text(
        "New facts arrived and now lead elsewhere: press b to go there (your other answers are kept).",
        "新的信息到达，结论已改变：按 b 前往新的位置（其他回答保持不变）。",
    ),
    "tui.save.title": Text("Save the commands and the checklist", "保存命令和验证清单"),
    "tui.save.help": Text(
        "Enter saves · .sh: a script that runs nothing until you pick a fix · .md: Markdown · other: plain text",
        "回车保存 · .sh：选择方案前不会执行任何操作的脚本 · .md：Markdown · 其他：纯文本",
    ),
    "tui.save.exists": Text(
        "{path} exists. Enter again overwrites it; or change the name.", "{path} 已存在。再按一次回车覆盖；或换个名字。"
    ),
    "tui.save.done": Text("Saved to {path}", "已保存到 {path}"),
    "save.exists": Text("{path} exists; pass --force to replace it", "{path} 已存在；要替换它请加 --force"),
    "save.no_fix": Text("nothing saved to {path}: no known failure was found, so there is no fix",
                        "未保存到 {path}：没有发现已知的故障，因此没有修复"),
    "tui.save.failed": Text("Could not save {path}: {error}", "无法保存 {path}：{error}"),
    "tui.report": Text("Bundle", "支持包"),
    "tui.welcome.resume": Text("Continue the last walk", "继续上次未完成的诊断"),
    "tui.report.running": Text("Writing the support bundle…", "正在写入支持包…"),
    "tui.report.done": Text("Support bundle (secrets and identities redacted) written to {paths}",
                            "支持包（已隐藏密钥和身份信息）已写入 {paths}"),
    "tui.report.failed": Text("Could not write the support bundle: {error}", "无法写入支持包：{error}"),
    "tui.plain.report_offer": Text("Write a support bundle (redacted) to attach to a ticket?",
                                   "写入一个（已脱敏的）支持包以附到工单中吗？"),
    "tui.verify": Text("Check new log", "检查新日志"),
    "tui.verify.title": Text("Check the log of the next start", "检查下次启动的日志"),
    "tui.verify.lead": Text(
        "Restart vLLM with a fix, then give the log of that start only: a file the server appends to "
        "still holds the old failure.",
        "用修复方案重启 vLLM，然后只提供这次启动的日志：服务持续追加写入的日志文件里仍有旧的报错。",
    ),
    "tui.verify.path_placeholder": Text("path/to/new-vllm.log", "新日志路径，例如 path/to/new-vllm.log"),
    "tui.verify.path_help": Text(
        "Enter checks this file · Tab or → completes the name (with nothing to complete, Tab moves to the paste box) "
        "· Esc cancels",
        "回车检查该文件 · Tab 或 → 补全文件名（无可补全时 Tab 移到粘贴框） · Esc 取消",
    ),
    "tui.verify.paste_help": Text("Or paste the new log here, then Ctrl+S:", "或者把新日志粘贴到这里，然后按 Ctrl+S："),
    "tui.verify.go": Text("Check", "检查"),
    "tui.verify.empty": Text("Give a path or paste the new log first.", "请先输入路径或粘贴新日志。"),
    "tui.verify.button": Text("Check the next start's log (v)", "检查下次启动的日志（v）"),
    "tui.verify.hint": Text(
        "After restarting with a fix, press v: the items marked “checkable automatically” are ticked from the new log.",
        "用修复方案重启后按 v：标有“可自动检查”的项目会根据新日志自动勾选。",
    ),
    "tui.verify.running": Text("Checking {what}…", "正在检查 {what}…"),
    "tui.verify.read_failed": Text("Could not check the log: {error}", "无法检查日志：{error}"),
    "tui.verify.checked": Text("Checked against {what}.", "已对照 {what} 检查。"),
    "tui.verify.pasted": Text("the pasted log", "粘贴的日志"),
    "tui.verify.summary_failed": Text(
        "The fix did not work yet: see the items marked [!] below.", "修复尚未生效：见下面标有 [!] 的项目。"
    ),
    "tui.verify.binary": Text(
        "{what} looks like a binary file, not a log: only its text lines were read.",
        "{what} 看起来是二进制文件而不是日志：只读取了其中的文本行。",
    ),
    "tui.plain.verify_offer": Text("Check the log of the next start now?", "现在检查下次启动的日志吗？"),
    "tui.plain.verify_path": Text("Path of the new log (the log of that start only)", "新日志的路径（只包含这次启动的日志）"),
    "tui.plain.detecting": Text("oomwizard: detecting this machine…", "oomwizard：正在检测本机…"),
    "tui.plain.back": Text("← back", "← 返回"),
    "tui.plain.help": Text("? why we ask", "? 为什么问"),
    "tui.plain.version_instruction": Text(
        "(Enter accepts; type “unknown” if you don't know, “back” or “help”)",
        "（回车确认；不知道请输入 “unknown”，也可输入 “back” 或 “help”）",
    ),
    "tui.plain.which_scenario": Text("Continue with which diagnosis?", "以哪个诊断继续？"),
    "tui.plain.none_of_these": Text("None of these — answer the questions", "都不是——回答问题"),
    "tui.plain.cancelled": Text("oomwizard: cancelled.", "oomwizard：已取消。"),
    "plain.pick": Text("Type a number from 1 to {n}.", "请输入 1 到 {n} 之间的数字。"),
    "plain.facts": Text("≡ review or change the facts", "≡ 查看或修改已知信息"),
    "plain.facts_prompt": Text(
        "Name of a fact to change (Enter: go on)", "要修改的事实名称（直接回车：继续）"
    ),
    "plain.paste_help": Text(
        "Paste the log, then a line with only a dot (.) or Ctrl+D:",
        "粘贴日志，然后输入只有一个点（.）的一行，或按 Ctrl+D：",
    ),
    "plain.save_offer": Text("Save the fix to a file?", "把修复方案保存到文件吗？"),
    "plain.save_path": Text(
        "File (.sh: a script that runs nothing until you pick a fix; .md: Markdown; other: text)",
        "文件（.sh：选择方案前不会执行任何操作的脚本；.md：Markdown；其他：纯文本）",
    ),
    "plain.save_replace": Text("{path} exists. Replace it?", "{path} 已存在。要替换它吗？"),
}


def ui(key: str, lang: str, **fmt: object) -> str:
    text = UI[key](lang)
    return text.format(**fmt) if fmt else text
