"""The planner's step for hybrid models: the state page, the attention block and the notes that say why.

The arithmetic is :mod:`.hybrid` (vLLM's rules per release); this module applies it to one model
and one set of inputs, and fails closed where :func:`.hybrid.check_release` says it must.
"""

from __future__ import annotations

from typing import Any

from ..i18n import Text
from ..versions import Version
from . import hybrid, kv
from .arch import DTYPE_BYTES, ModelDesc
from .errors import PlanError
from .inputs import Inputs


def state_pages(inp: Inputs, m: ModelDesc, tp: int, pp: int, kv_bytes: int, dtype: str, release: Version,
                gpu_name: str, notes: list[Text]) -> dict[str, Any]:
    """The attention block size and the padded state page of a hybrid model (:mod:`.hybrid`)."""
    hybrid.check_release(release, pp, m.model_type, inp.enable_prefix_caching)
    attn = next(layer for layer in m.layers if layer.kind != "state")
    st = next(layer.state for layer in m.layers if layer.state is not None)
    per_token = 2 * max(1, attn.num_kv_heads // tp) * attn.head_size * kv_bytes  # FullAttentionSpec, block_size=1
    ssm, why = hybrid.ssm_dtype(m.model_type, m.architecture, m.config_ssm_dtype, dtype, release)
    ssm_bytes = hybrid.DTYPE_BYTES.get(ssm)
    if ssm_bytes is None:
        raise PlanError(f"mamba_ssm_cache_dtype {ssm!r} is not modelled", f"不支持 mamba_ssm_cache_dtype {ssm!r}")
    page = hybrid.state_bytes(st, tp, DTYPE_BYTES[dtype], ssm_bytes)
    al = hybrid.align(per_token, page, inp.block_size, release, gpu_name, attn.head_size)
    conv, temporal = hybrid.state_shapes(st, tp)
    n_state = sum(1 for layer in m.layers if layer.kind == "state")
    if hybrid.cache_mode(release, m.model_type, inp.enable_prefix_caching) == "align":
        notes.append(Text("prefix caching on (the default for hybrid models from 0.26.0): mamba_cache_mode 'align' keeps "
                          "two state pages per request; with --no-enable-prefix-caching vLLM keeps one",
                          "前缀缓存开启（自 0.26.0 起混合模型的默认）：mamba_cache_mode 'align' 每请求保留两个状态页；"
                          "使用 --no-enable-prefix-caching 时只保留一个"))
    notes.append(Text(f"{n_state} {st.kind} state layers: conv {conv} x {dtype}, temporal {temporal} x {ssm} ({why}) = "
                      f"{page:,} B per request; {al.note}",
                      f"{n_state} 个 {st.kind} 状态层：conv {conv} x {dtype}，temporal {temporal} x {ssm} = 每请求 {page:,} B；"
                      f"注意力块大小 {al.block_size} token，状态页填充到 {al.padded_page:,} B"))
    return {"block_size": al.block_size, "state_page": page, "padded_page": al.padded_page,
            "formula": f"state {page:,} B (prod(conv) x {dtype} + prod(temporal) x {ssm}) padded to block "
                       f"{al.block_size} x {per_token:,} B", "source": "vllm/model_executor/layers/mamba/mamba_utils.py, "
                       f"{'vllm/platforms/interface.py' if release >= kv.v('0.20.0') else 'vllm/model_executor/models/config.py'}"
                       f" @{release.text}"}
