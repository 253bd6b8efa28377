"""Talking to NVML (``nvidia-ml-py``, imported as ``pynvml``): the module's shape, its failures as sentences.

Every failure becomes a sentence, never a traceback: no driver, a driver/library mismatch (whose
exception in nvidia-ml-py is *not* an ``NVMLError``), no permission, one GPU lost while the others
still answer. Return codes are read from the module when it has them (``nvml.h`` values otherwise),
so a fake module in the tests and an older nvidia-ml-py are read alike.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..i18n import both


class Nvml(Protocol):
    """The functions of pynvml that detection calls directly. Every other one is looked up by name
    (``getattr``), because the NVML of an older driver may lack it; a handle is opaque."""

    def nvmlInit(self) -> None: ...

    def nvmlShutdown(self) -> None: ...

    def nvmlDeviceGetCount(self) -> int: ...

    def nvmlDeviceGetHandleByIndex(self, index: int) -> object: ...


@runtime_checkable
class MemoryInfo(Protocol):
    """What ``nvmlDeviceGetMemoryInfo`` answers (the v2 form adds ``reserved``)."""

    total: int
    used: int
    free: int


def as_int(v: object) -> int | None:
    """An NVML number, or None for anything else (an unsupported field's None, a stray object)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def as_int_pair(v: object) -> tuple[int, int] | None:
    """The two numbers of a compute capability or a MIG mode (current, pending), or None."""
    if isinstance(v, (tuple, list)) and len(v) >= 2:
        a, b = as_int(v[0]), as_int(v[1])
        if a is not None and b is not None:
            return a, b
    return None


# NVML return codes (nvml.h); read from the module when it has them.
_CODES = {
    "UNINITIALIZED": 1,
    "INVALID_ARGUMENT": 2,
    "NOT_SUPPORTED": 3,
    "NO_PERMISSION": 4,
    "NOT_FOUND": 6,
    "DRIVER_NOT_LOADED": 9,
    "LIBRARY_NOT_FOUND": 12,
    "FUNCTION_NOT_FOUND": 13,
    "GPU_IS_LOST": 15,
    "LIB_RM_VERSION_MISMATCH": 18,
    "UNKNOWN": 999,
}

class GpuLost(Exception):
    """A GPU fell off the bus while being read: the rest of its fields are not worth asking for."""


def nvml_code(nv: Nvml, name: str) -> int:
    """The module's value for ``NVML_ERROR_<name>``, else the one in nvml.h."""
    return int(getattr(nv, f"NVML_ERROR_{name}", _CODES[name]))


def err_code(e: BaseException) -> int | None:
    v = getattr(e, "value", None)
    return v if isinstance(v, int) else None


def is_mismatch(nv: Nvml, e: BaseException) -> bool:
    """nvidia-ml-py raises its own class, not an NVMLError, when it and the driver disagree."""
    cls = getattr(nv, "NVMLLibraryMismatchError", None)
    return isinstance(cls, type) and isinstance(e, cls)


def as_text(v: object) -> str | None:
    """Older nvidia-ml-py returns bytes where newer returns str."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v if isinstance(v, str) or v is None else str(v)


def err_str(e: BaseException) -> str:
    try:
        s = str(e)
    except Exception:  # noqa: BLE001 - a broken __str__ must not become a traceback
        s = ""
    return s or type(e).__name__


def _problem(code: str, key: str, **fmt: object) -> dict[str, str]:
    """A detection problem as ``{"code", "en", "zh"}`` from the catalogue string ``key``."""
    en, zh = both(key, **fmt)
    return {"code": code, "en": en, "zh": zh}


_INIT_CODES = (("DRIVER_NOT_LOADED", "driver_not_loaded", "facts.gpu.driver_not_loaded"),
               ("LIB_RM_VERSION_MISMATCH", "driver_mismatch", "facts.gpu.driver_mismatch"),
               ("NO_PERMISSION", "no_permission", "facts.gpu.no_permission"))
"""NVML's start-up error codes with a message of their own: (NVML name, problem code, catalogue key)."""


def init_failure(nv: Nvml, e: BaseException) -> dict[str, str]:
    """Why NVML could not start, as ``{"code", "en", "zh"}``."""
    code = err_code(e)
    if is_mismatch(nv, e):
        return _problem("library_mismatch", "facts.gpu.library_mismatch", err_str=err_str(e))
    if isinstance(e, OSError) or code == nvml_code(nv, "LIBRARY_NOT_FOUND"):
        return _problem("no_driver", "facts.gpu.no_driver")
    for name, problem, key in _INIT_CODES:
        if code == nvml_code(nv, name):
            return _problem(problem, key)
    return _problem("nvml_error", "facts.gpu.nvml_error", err_str=err_str(e))


def import_nvml() -> tuple[Nvml | None, dict[str, str] | None]:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None, _problem("no_pynvml", "facts.gpu.no_pynvml")
    except Exception as e:  # noqa: BLE001 - a broken install must not stop detection
        return None, _problem("no_pynvml", "facts.gpu.pynvml_import_failed", err_str=err_str(e))
    return pynvml, None


def device_error(nv: Nvml, e: BaseException) -> tuple[str, str]:
    """Why one GPU could not be opened, in English and Chinese (the report's ``error``, ``error_zh``)."""
    code = err_code(e)
    if code == nvml_code(nv, "GPU_IS_LOST"):
        return both("facts.gpu.device_lost")
    if code == nvml_code(nv, "NO_PERMISSION"):
        return both("facts.gpu.device_no_permission")
    if code == nvml_code(nv, "UNKNOWN"):
        return both("facts.gpu.device_unknown_error")
    return both("facts.gpu.device_open_failed", err_str=err_str(e))
