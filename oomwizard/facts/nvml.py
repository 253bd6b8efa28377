"""Talking to NVML (``nvidia-ml-py``, imported as ``pynvml``): the module's shape, its failures as sentences.

Every failure becomes a sentence, never a traceback: no driver, a driver/library mismatch (whose
exception in nvidia-ml-py is *not* an ``NVMLError``), no permission, one GPU lost while the others
still answer. Return codes are read from the module when it has them (``nvml.h`` values otherwise),
so a fake module in the tests and an older nvidia-ml-py are read alike.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


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


def init_failure(nv: Nvml, e: BaseException) -> dict[str, str]:
    """Why NVML could not start, as ``{"code", "en", "zh"}``."""
    code = err_code(e)
    if is_mismatch(nv, e):
        return {
            "code": "library_mismatch",
            "en": f"nvidia-ml-py and the driver's NVML library do not match ({err_str(e)}); upgrade nvidia-ml-py or the driver",
            "zh": f"nvidia-ml-py 与驱动的 NVML 库版本不匹配（{err_str(e)}）；请升级 nvidia-ml-py 或驱动",
        }
    if isinstance(e, OSError) or code == nvml_code(nv, "LIBRARY_NOT_FOUND"):
        return {
            "code": "no_driver",
            "en": "no NVIDIA driver here: libnvidia-ml.so.1 was not found (no NVIDIA GPU, the driver is not installed, or it is not mounted into this container)",
            "zh": "这里没有 NVIDIA 驱动：找不到 libnvidia-ml.so.1（没有 NVIDIA GPU、未安装驱动，或驱动未挂载进容器）",
        }
    if code == nvml_code(nv, "DRIVER_NOT_LOADED"):
        return {
            "code": "driver_not_loaded",
            "en": "the NVIDIA kernel driver is not loaded (nvidia-smi fails the same way); load it or reboot",
            "zh": "NVIDIA 内核驱动未加载（nvidia-smi 也会同样失败）；请加载驱动或重启",
        }
    if code == nvml_code(nv, "LIB_RM_VERSION_MISMATCH"):
        return {
            "code": "driver_mismatch",
            "en": "driver/library version mismatch: the loaded NVIDIA kernel module and libnvidia-ml differ, usually after a driver upgrade without a reboot; nvidia-smi fails the same way until you reboot",
            "zh": "驱动与库版本不匹配：已加载的 NVIDIA 内核模块与 libnvidia-ml 版本不同，通常是升级驱动后未重启；重启前 nvidia-smi 也会失败",
        }
    if code == nvml_code(nv, "NO_PERMISSION"):
        return {
            "code": "no_permission",
            "en": "no permission to read the GPUs through NVML (the /dev/nvidia* devices are not accessible to this user)",
            "zh": "没有权限通过 NVML 读取 GPU（当前用户无法访问 /dev/nvidia* 设备）",
        }
    return {
        "code": "nvml_error",
        "en": f"NVML could not start: {err_str(e)}",
        "zh": f"NVML 无法启动：{err_str(e)}",
    }


def import_nvml() -> tuple[Nvml | None, dict[str, str] | None]:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None, {
            "code": "no_pynvml",
            "en": "nvidia-ml-py is not installed in the Python that runs oomwizard (pip install nvidia-ml-py)",
            "zh": "运行 oomwizard 的 Python 中没有安装 nvidia-ml-py（pip install nvidia-ml-py）",
        }
    except Exception as e:  # noqa: BLE001 - a broken install must not stop detection
        return None, {"code": "no_pynvml", "en": f"nvidia-ml-py failed to import: {err_str(e)}", "zh": f"nvidia-ml-py 导入失败：{err_str(e)}"}
    return pynvml, None


def device_error(nv: Nvml, e: BaseException) -> str:
    """Why one GPU could not be opened."""
    code = err_code(e)
    if code == nvml_code(nv, "GPU_IS_LOST"):
        return "GPU is lost (fell off the bus); it needs a reset or a reboot before anything can use it"
    if code == nvml_code(nv, "NO_PERMISSION"):
        return "no permission to open this GPU"
    if code == nvml_code(nv, "UNKNOWN"):
        return "NVML reported an unknown error for this GPU (check dmesg for Xid errors)"
    return f"could not open this GPU: {err_str(e)}"
