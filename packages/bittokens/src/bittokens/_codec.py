"""Loop-free IEEE-754 float <-> bit codecs for numpy arrays and torch tensors.

A BitToken is the IEEE-754 bit pattern of a number, most significant bit first:

.. math::

    x = (-1)^{b_0} \\; 2^{E - 1023} \\; (1.b_{12} b_{13} \\dots b_{63})_2, \\qquad
    E = (b_1 \\dots b_{11})_2

for ``float64`` (1 sign, 11 exponent, 52 mantissa bits); ``float32`` has 1/8/23 and ``bfloat16``
1/8/7. With ``reciprocal=True`` (the default of every released BitTokens configuration) the bits
of :math:`1/x` follow those of :math:`x` (IEEE division: :math:`1/\\pm 0 = \\pm\\infty`), so a
float64 token has 128 bits. Zeros, infinities, NaN (payload kept) and subnormals need no special
case because the codec only reinterprets memory.

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_choice

__all__ = [
    "PRECISIONS",
    "bit_flip_errors",
    "decode",
    "decode_confidence",
    "encode",
    "encode_pm1",
    "field_slices",
]

#: width, exponent bits, mantissa bits of each supported precision.
PRECISIONS: dict[str, tuple[int, int, int]] = {
    "float64": (64, 11, 52),
    "float32": (32, 8, 23),
    "bfloat16": (16, 8, 7),
}


def field_slices(precision: str = "float64") -> dict[str, slice]:
    """Bit ranges of the sign, exponent and mantissa fields (MSB first) of one number."""
    width, n_exp, _ = PRECISIONS[check_choice(precision, "precision", PRECISIONS)]
    return {
        "sign": slice(0, 1),
        "exponent": slice(1, 1 + n_exp),
        "mantissa": slice(1 + n_exp, width),
    }


def _is_torch(x: Any) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a core dependency
        return False
    return isinstance(x, torch.Tensor)


def _check_float_numpy(x: Any) -> NDArray[Any]:
    arr = np.asarray(x)
    if arr.dtype.kind == "c":
        raise ValueError(f"x must be a real floating-point array, got complex dtype {arr.dtype}")
    if arr.dtype.kind != "f":
        raise ValueError(f"x must be a floating-point array, got dtype {arr.dtype}")
    return arr


# ----------------------------------------------------------------------------------------------
# numpy
# ----------------------------------------------------------------------------------------------
def _bf16_bits_from_f32(u: NDArray[np.uint32]) -> NDArray[np.uint16]:
    """Round float32 bit patterns to bfloat16 (nearest, ties to even); NaN keeps its top payload
    bits (quieted only if they are all zero, which would read as infinity)."""
    is_nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    trunc = u >> np.uint32(16)
    nan_bits = np.where((trunc & np.uint32(0x7F)) == 0, trunc | np.uint32(0x0040), trunc)
    return np.where(is_nan, nan_bits, rounded).astype(np.uint16)


def _numpy_words(x: NDArray[Any], precision: str) -> NDArray[Any]:
    """Big-endian bytes ``(..., width/8)`` of ``x`` rounded to ``precision``."""
    if precision == "float64":
        return x.astype(">f8", copy=False).view(np.uint8).reshape(*x.shape, 8)
    if precision == "float32":
        return x.astype(">f4", copy=False).view(np.uint8).reshape(*x.shape, 4)
    u = x.astype(np.float32, copy=False).view(np.uint32)
    return _bf16_bits_from_f32(u).astype(">u2").view(np.uint8).reshape(*x.shape, 2)


def _encode_numpy(x: NDArray[Any], precision: str, reciprocal: bool) -> NDArray[np.uint8]:
    bits = np.unpackbits(_numpy_words(x, precision), axis=-1)
    if not reciprocal:
        return bits
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        inv = np.divide(x.dtype.type(1), x)
    return np.concatenate([bits, np.unpackbits(_numpy_words(inv, precision), axis=-1)], axis=-1)


def _decode_numpy(bits: NDArray[np.uint8], width: int) -> NDArray[Any]:
    packed = np.packbits(bits[..., :width], axis=-1)
    packed = np.ascontiguousarray(packed)
    if width == 64:
        return packed.view(">f8")[..., 0].astype(np.float64)
    if width == 32:
        return packed.view(">f4")[..., 0].astype(np.float32)
    hi = packed.view(">u2")[..., 0].astype(np.uint32) << np.uint32(16)
    return hi.view(np.float32)


# ----------------------------------------------------------------------------------------------
# torch
# ----------------------------------------------------------------------------------------------
_TORCH_DTYPES = {"float64": "float64", "float32": "float32", "bfloat16": "bfloat16"}


def _torch_bytes(x: Any, precision: str) -> Any:
    import torch

    target = getattr(torch, precision)
    y = x.to(target).contiguous()
    n_bytes = PRECISIONS[precision][0] // 8
    b = y.reshape(-1).view(torch.uint8).reshape(*y.shape, n_bytes)
    import sys

    return b.flip(-1) if sys.byteorder == "little" else b


def _encode_torch(x: Any, precision: str, reciprocal: bool) -> Any:
    import torch

    shifts = torch.arange(7, -1, -1, dtype=torch.uint8, device=x.device)

    def unpack(v: Any) -> Any:
        b = _torch_bytes(v, precision)
        return ((b.unsqueeze(-1) >> shifts) & 1).reshape(*v.shape, -1)

    bits = unpack(x)
    if not reciprocal:
        return bits
    return torch.cat([bits, unpack(torch.reciprocal(x))], dim=-1)


def _decode_torch(bits: Any, width: int) -> Any:
    import sys

    import torch

    b = bits[..., :width].to(torch.uint8).reshape(*bits.shape[:-1], width // 8, 8)
    shifts = torch.arange(7, -1, -1, dtype=torch.uint8, device=bits.device)
    packed = (b << shifts).sum(-1).to(torch.uint8)
    if sys.byteorder == "little":
        packed = packed.flip(-1)
    dtype = {64: torch.float64, 32: torch.float32, 16: torch.bfloat16}[width]
    return packed.contiguous().view(dtype).squeeze(-1)


# ----------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------
def encode(x: Any, precision: str = "float64", reciprocal: bool = True) -> Any:
    """Encode floats as their IEEE-754 bits, most significant bit first.

    Args:
        x: floating-point numpy array / scalar or torch tensor, any shape ``(...)``.
        precision: ``"float64"`` (64 bits), ``"float32"`` (32) or ``"bfloat16"`` (16). Values are
            rounded to this precision first (bfloat16 via float32, as torch does).
        reciprocal: append the bits of ``1/x`` (default ``True``, as in the paper's configs).

    Returns:
        ``uint8`` array/tensor of 0/1 with shape ``(..., w)`` or ``(..., 2w)`` (``w`` the width),
        numpy in numpy out, torch in torch out (same device).

    Raises:
        ValueError: integer, bool or complex input, or an unknown precision.

    Examples:
        >>> encode(np.array([1.0]), reciprocal=False)[0, :12].tolist()
        [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    """
    check_choice(precision, "precision", PRECISIONS)
    if not isinstance(reciprocal, bool | np.bool_):
        raise TypeError(f"reciprocal must be True or False, got {reciprocal!r}")
    if _is_torch(x):
        if x.is_complex():
            raise ValueError(f"x must be a real floating-point tensor, got complex dtype {x.dtype}")
        if not x.is_floating_point():
            raise ValueError(f"x must be a floating-point tensor, got dtype {x.dtype}")
        return _encode_torch(x, precision, reciprocal)
    return _encode_numpy(_check_float_numpy(x), precision, reciprocal)


def encode_pm1(
    x: Any, precision: str = "float64", reciprocal: bool = True, dtype: Any = None
) -> Any:
    """Bits mapped to signs, ``e = 2 b - 1`` in {-1, +1} (float32 unless ``dtype`` is given)."""
    bits = encode(x, precision, reciprocal)
    if _is_torch(bits):
        import torch

        return bits.to(dtype or torch.float32) * 2 - 1
    return bits.astype(dtype or np.float32) * 2 - 1


def _width_from(last: int, precision: str | None) -> int:
    if precision is not None:
        width = PRECISIONS[check_choice(precision, "precision", PRECISIONS)][0]
        if last not in (width, 2 * width):
            raise ValueError(
                f"bits must have last dimension {width} or {2 * width} for {precision}, got {last}"
            )
        return width
    if last not in (16, 32, 64, 128):
        raise ValueError(f"bits must have last dimension 16, 32, 64 or 128, got {last}")
    if last in (32, 64):
        # 32 = float32 or bfloat16 + reciprocal; 64 = float64 or float32 + reciprocal.
        raise ValueError(
            f"precision=None is ambiguous for a last dimension of {last} (it fits "
            f"{'float32 or bfloat16 with reciprocal' if last == 32 else 'float64 or float32 with reciprocal'}"
            "): pass precision explicitly"
        )
    return 64 if last == 128 else last


def decode(bits: Any, precision: str | None = "float64") -> Any:
    """Decode bits (or logits) back to floats: ``b_k = [logit_k > 0]``, pack, reinterpret.

    Args:
        bits: numpy array / torch tensor ``(..., w)`` or ``(..., 2w)``. Integer or bool input is
            read as bits and must hold only 0 and 1; floating input is read as logits (or as
            signs ``2b - 1``) and thresholded at 0. With ``2w`` columns the reciprocal half is
            ignored.
        precision: the precision the bits encode; ``None`` infers it from the last dimension
            where that is unambiguous (16 = bfloat16, 128 = float64 with reciprocal) and raises
            for 32 and 64, which two precisions share.

    Returns:
        float64 values for float64 bits; float32 for float32 and (numpy) bfloat16 bits, which
        float32 holds exactly; torch input gives a torch tensor of the matching dtype (bfloat16
        for bfloat16), so every round trip is bit-exact. Shape ``(...)``. A row whose logits
        contain NaN decodes to NaN (thresholding NaN would silently give a made-up number).

    Raises:
        ValueError: values outside {0, 1}, a last dimension not 16/32/64 (x2 with the
            reciprocal), or an unknown precision.
    """
    if _is_torch(bits):
        width = _width_from(int(bits.shape[-1]) if bits.ndim else 0, precision)
        if bits.is_floating_point():
            out = _decode_torch(bits > 0, width)
            bad = bits[..., :width].isnan().any(-1)
            if bool(bad.any()):
                out = out.masked_fill(bad, float("nan"))
            return out
        else:
            if bits.numel() and (bits.min() < 0 or bits.max() > 1):
                raise ValueError(
                    f"bits must hold only 0 and 1, got values in [{int(bits.min())}, "
                    f"{int(bits.max())}]"
                )
            b = bits
        return _decode_torch(b, width)
    arr = np.asarray(bits)
    if arr.dtype.kind == "c":
        raise ValueError(f"bits must be real, got complex dtype {arr.dtype}")
    width = _width_from(arr.shape[-1] if arr.ndim else 0, precision)
    if arr.dtype.kind == "f":
        out = _decode_numpy(arr > 0, width)
        bad = np.isnan(arr[..., :width]).any(-1)
        if bad.any():
            out = np.where(bad, out.dtype.type(np.nan), out)
        return out
    elif arr.dtype.kind in "biu":
        if (
            arr.size
            and arr.dtype.kind != "b"
            and (arr.max() > 1 or (arr.dtype.kind == "i" and arr.min() < 0))
        ):
            raise ValueError(
                f"bits must hold only 0 and 1, got values in [{arr.min()}, {arr.max()}]"
            )
        b = arr
    else:
        raise ValueError(f"bits must be an integer, bool or float array, got dtype {arr.dtype}")
    return _decode_numpy(b, width)


def decode_confidence(logits: Any, precision: str = "float64") -> dict[str, Any]:
    """Per-field decode confidence: the smallest ``|logit|`` in the sign, exponent and mantissa.

    A small exponent margin flags a prediction whose order of magnitude is uncertain (an
    exponent bit flip changes the value by a factor of up to :math:`2^{1024}`), while a small
    mantissa margin only affects the trailing digits.

    Args:
        logits: float array/tensor ``(..., w)`` or ``(..., 2w)`` (only the first ``w`` are read).
        precision: the precision the logits encode.

    Returns:
        ``{"sign", "exponent", "mantissa"}`` margins of shape ``(...)`` and ``"uncertain_exponent"``
        (bool, exponent margin below 1, i.e. within the noise the decoder provably tolerates).
    """
    width = _width_from(int(logits.shape[-1]), precision)
    fields = field_slices(precision or "float64")
    if _is_torch(logits):
        a = logits[..., :width].abs()
        out = {k: a[..., s].amin(-1) for k, s in fields.items()}
    else:
        a = np.abs(np.asarray(logits, dtype=np.float64)[..., :width])
        out = {k: a[..., s].min(-1) for k, s in fields.items()}
    out["uncertain_exponent"] = out["exponent"] < 1
    return out


def bit_flip_errors(x: Any, precision: str = "float64") -> NDArray[np.float64]:
    """Relative error ``|x' - x| / |x|`` caused by flipping each single bit of ``x``.

    Args:
        x: finite non-zero floats, shape ``(n,)``.
        precision: the precision of the bit strings.

    Returns:
        ``(n, w)`` array; column ``k`` is the error of flipping bit ``k`` (MSB first). Sign flips
        give 2, exponent flips give factors up to ``2^(2^(E-1))`` (or inf/NaN), mantissa bit
        ``k`` gives at most ``2^-(k - 1 - n_exp)``.
    """
    arr = np.asarray(_check_float_numpy(x), dtype=np.float64).reshape(-1)
    width = PRECISIONS[check_choice(precision, "precision", PRECISIONS)][0]
    bits = encode(arr, precision, reciprocal=False)
    eye = np.eye(width, dtype=np.uint8)
    flipped = bits[:, None, :] ^ eye[None, :, :]
    vals = decode(flipped, precision).astype(np.float64)
    ref = decode(bits, precision).astype(np.float64)[:, None]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return np.abs(vals - ref) / np.abs(ref)
