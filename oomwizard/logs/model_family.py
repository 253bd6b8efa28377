"""The model's family, and whether it is MoE, hybrid or multimodal, from its name and architecture.

Best effort over names: what the ranking and the fixes need to know about a model the log only
names (``Qwen3-235B-A22B``, ``DeepseekV3ForCausalLM``).
"""

from __future__ import annotations

import re
from typing import Any

_MOE_RE = re.compile(r"moe|mixtral|deepseekv[234]|deepseek-v[234]|deepseek-r1|gptoss|gpt-oss|kimi|llama4|"
                     r"-a\d+(?:\.\d+)?b\b|glm4moe|glm-4\.5|glm-4\.6|minimax|dbrx|arctic|jamba|granitemoe|hunyuan", re.I)
_MM_RE = re.compile(r"vl\b|vlm|vision|llava|pixtral|idefics|internvl|minicpmv|omni|paligemma|mllama|gemma3forcond|"
                    r"qwen2_5_vl|qwen2vl|qwen3vl|phi3v|phi4mm|whisper|audio|ForConditionalGeneration", re.I)
_HYBRID_RE = re.compile(r"mamba|jamba|nemotronh|nemotron-h|falconh1|falcon-h1|zamba|bamba|plamo2|hybrid|"
                        r"qwen3next|qwen3-next|lfm2|minimaxtext01|minimaxm1|minimax-m1|kimilinear|kimi-linear|rwkv",
                        re.I)
"""State-space, linear-attention and other hybrid architectures: 0.25-0.28 turned model runner V2 on
for dense models only where they are neither hybrid nor attention-free (vllm#44443), so these stay on V1."""
_FAMILIES = (
    ("deepseek_v32", re.compile(r"DeepseekV32|DeepSeek-V3\.2|GlmMoeDsa", re.I)),
    ("deepseek_v4", re.compile(r"DeepseekV4|DeepSeek-V4", re.I)),
    ("deepseek_v3", re.compile(r"DeepseekV3|DeepSeek-V3|DeepSeek-R1|DeepseekV2|DeepSeek-V2", re.I)),
    ("kimi", re.compile(r"kimi", re.I)),
    ("qwen", re.compile(r"qwen", re.I)),
    ("llama", re.compile(r"llama", re.I)),
    ("mistral", re.compile(r"mistral|mixtral|ministral|devstral|magistral|pixtral", re.I)),
    ("gpt_oss", re.compile(r"gpt-?oss", re.I)),
    ("glm", re.compile(r"glm", re.I)),
    ("gemma", re.compile(r"gemma", re.I)),
)


def derive_model_facts(model: str | None, arch: str | None) -> dict[str, Any]:
    """Model family, MoE and multimodal from the model name and architecture (best effort)."""
    text = " ".join(x for x in (arch, model) if x)
    if not text:
        return {}
    out: dict[str, Any] = {}
    for family, rx in _FAMILIES:
        if rx.search(text):
            out["model_family"] = family
            break
    else:
        out["model_family"] = "other"
    if _MOE_RE.search(text):
        out["is_moe"] = True
    elif arch:
        out["is_moe"] = False
    if _HYBRID_RE.search(text):
        out["is_hybrid"] = True
    elif arch:
        out["is_hybrid"] = False
    if (arch and _MM_RE.search(arch)) or (model and re.search(r"-VL-|[-_]VL\b|Vision|llava|Omni|pixtral", model, re.I)):
        out["is_multimodal"] = True
    return out
