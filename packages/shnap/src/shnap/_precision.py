"""Mixed precision: bf16 autocast only where the CPU computes bf16 natively.

On a CPU with native bf16 arithmetic (x86 AVX512-BF16 or AMX-BF16, ARMv8.6 BF16) autocast
roughly halves the UNets' time; elsewhere (an AVX2 machine, say) PyTorch emulates bf16 and a
UNet forward runs about two orders of magnitude slower than float32. Configs therefore take
``bf16=None`` (the default: bf16 exactly where it is native), ``True`` (forced, with a warning
on a CPU without it) or ``False``.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import torch

_NATIVE_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


@functools.cache
def native_bf16() -> bool:
    """True when this CPU computes bf16 natively (read once from ``/proc/cpuinfo``).

    x86 reports ``avx512_bf16`` or ``amx_bf16`` in its flags, ARM ``bf16`` in its features.
    Where the file cannot be read (macOS, Windows) the answer is False: float32 is then used.
    """
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags.update(line.partition(":")[2].split())
    return bool(flags & _NATIVE_FLAGS)


def resolve_bf16(flag: bool | None, where: str) -> bool:
    """The precision to run: ``flag`` if given, else :func:`native_bf16`.

    ``flag=True`` on a CPU without native bf16 warns (it runs, far slower than float32).
    """
    if flag is None:
        return native_bf16()
    if not isinstance(flag, bool):
        raise TypeError(f"{where}: bf16 must be True, False or None (auto), got {flag!r}")
    if flag and not native_bf16():
        warnings.warn(
            f"{where}: bf16=True on a CPU without native bf16 "
            f"(capability {torch.backends.cpu.get_cpu_capability()}): autocast emulates bf16 "
            "and runs far slower than float32; pass bf16=None to choose automatically",
            RuntimeWarning,
            stacklevel=3,
        )
    return flag


def autocast(enabled: bool) -> torch.autocast:
    """``torch.autocast`` on the CPU in bf16, active only when ``enabled``."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled)
