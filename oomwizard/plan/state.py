"""The planner's step for hybrid models: the state page, the attention block and the notes that say why.

The arithmetic is :mod:`.hybrid` (vLLM's rules per release); this module applies it to one model
and one set of inputs, and fails closed where :func:`.hybrid.check_release` says it must.
"""

from __future__ import annotations

from typing import Any

from ..i18n import Text, both, msg
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
        raise PlanError(*both("plan.state.ssm_dtype_unknown", dtype=repr(ssm)))
    page = hybrid.state_bytes(st, tp, DTYPE_BYTES[dtype], ssm_bytes)
    al = hybrid.align(per_token, page, inp.block_size, release, gpu_name, attn.head_size)
    conv, temporal = hybrid.state_shapes(st, tp)
    n_state = sum(1 for layer in m.layers if layer.kind == "state")
    if hybrid.cache_mode(release, m.model_type, inp.enable_prefix_caching) == "align":
        notes.append(msg("plan.state.prefix_align"))
    notes.append(Text(*both("plan.state.layers", n=n_state, kind=st.kind, conv=conv, dtype=dtype, temporal=temporal,
                            ssm=ssm, why=why, page=f"{page:,}", note=al.note)))
    return {"block_size": al.block_size, "state_page": page, "padded_page": al.padded_page,
            "formula": f"state {page:,} B (prod(conv) x {dtype} + prod(temporal) x {ssm}) padded to block "
                       f"{al.block_size} x {per_token:,} B", "source": "vllm/model_executor/layers/mamba/mamba_utils.py, "
                       f"{'vllm/platforms/interface.py' if release >= kv.v('0.20.0') else 'vllm/model_executor/models/config.py'}"
                       f" @{release.text}"}
