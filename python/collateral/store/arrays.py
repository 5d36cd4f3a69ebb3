"""Arrow arrays made from numpy buffers, for the tables a run stores.

``pa.array`` imports pandas the first time it is called (0.3-0.6 s), only to ask whether
its input is a pandas object; a run never hands it one, and ``collateral run`` would
otherwise spend a third of a small sweep importing pandas, in the first worker to finish
a batch while the others wait for it. :func:`array` builds the same arrays from numpy
buffers (``pa.Array.from_buffers``) for the flat values a run stores (None, bool, int,
float, str, and numpy arrays of a fixed-width type), and leaves anything else to
``pa.array``. It types values as ``pa.array`` does (tested against it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: The largest int every smaller one of which a double holds exactly.
_EXACT = 2**53


def array(
    values: Sequence[Any] | np.ndarray, type: pa.DataType | None = None, mask: Any = None
) -> pa.Array:
    """``pa.array(values, type=type, mask=mask)`` without pyarrow's look for pandas.
    ``mask``: a numpy bool array, True where the value is missing."""
    import numpy as np
    import pyarrow as pa

    try:
        built = _build(np, pa, values, type, mask)
    except (TypeError, ValueError, OverflowError, UnicodeError):
        built = None  # pa.array decides, and raises its own error if the values are bad
    if built is None:
        return pa.array(values, type=type, mask=mask)
    return built


def _build(np: Any, pa: Any, values: Any, typ: Any, mask: Any) -> pa.Array | None:
    # Left to pa.array: a type named by a string, a mask that is not a numpy bool array
    # of the values' length, a masked array (its own mask), other containers.
    if typ is not None and not isinstance(typ, pa.DataType):
        return None
    if type(values) not in (list, np.ndarray):
        return None
    n = len(values)
    if mask is not None and (
        type(mask) is not np.ndarray or mask.dtype != np.bool_ or mask.shape != (n,)
    ):
        return None
    if type(values) is np.ndarray:
        if values.ndim != 1 or values.dtype.kind not in "iufb" or not values.dtype.isnative:
            return None
        natural = pa.from_numpy_dtype(values.dtype)
        if typ is not None and typ != natural:
            return None  # a conversion: pa.array's checks apply
        return _fixed(np, pa, natural, values, mask)
    present = [v for v in values if v is not None]
    kinds = {type(v) for v in present}
    if typ is None:
        if mask is not None:
            return None  # pa.array infers from the unmasked values only
        if not present:
            return pa.nulls(n)
        if kinds == {bool}:
            typ = pa.bool_()
        elif kinds == {int}:
            typ = pa.int64()  # beyond its range pa.array decides (below): uint64 or an error
        elif kinds in ({float}, {int, float}):
            typ = pa.float64()
        elif kinds == {str}:
            typ = pa.string()
        else:
            return None
    missing = np.fromiter((v is None for v in values), dtype=np.bool_, count=n)
    if mask is not None:
        missing |= mask
    if pa.types.is_string(typ):
        if not kinds <= {str}:
            return None
        return _strings(np, pa, values, missing)
    if pa.types.is_boolean(typ):
        if not kinds <= {bool}:
            return None
        data = np.fromiter((v is True for v in values), dtype=np.bool_, count=n)
        return _fixed(np, pa, typ, data, missing)
    if pa.types.is_integer(typ):
        if not kinds <= {int}:
            return None
        dtype = typ.to_pandas_dtype()
        info = np.iinfo(dtype)
        if present and not info.min <= min(present) <= max(present) <= info.max:
            return None
        data = np.fromiter((0 if v is None else v for v in values), dtype=dtype, count=n)
        return _fixed(np, pa, typ, data, missing)
    if pa.types.is_float64(typ):
        ints = [v for v in present if type(v) is int]
        if not kinds <= {int, float} or any(abs(v) > _EXACT for v in ints):
            return None  # an int a double cannot hold exactly: pa.array refuses it
        data = np.fromiter(
            (0.0 if v is None else v for v in values), dtype=typ.to_pandas_dtype(), count=n
        )
        return _fixed(np, pa, typ, data, missing)
    return None


def _validity(np: Any, pa: Any, missing: Any) -> pa.Buffer | None:
    if missing is None or not missing.any():
        return None
    return pa.py_buffer(np.packbits(~missing, bitorder="little"))


def _fixed(np: Any, pa: Any, typ: Any, data: Any, missing: Any) -> pa.Array:
    n = len(data)
    if pa.types.is_boolean(typ):
        buf = pa.py_buffer(np.packbits(data.astype(np.bool_), bitorder="little"))
    else:
        buf = pa.py_buffer(np.ascontiguousarray(data))
    return pa.Array.from_buffers(typ, n, [_validity(np, pa, missing), buf])


def _strings(np: Any, pa: Any, values: Sequence[Any], missing: Any) -> pa.Array:
    encoded = [b"" if v is None else v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    if offsets[-1] >= 2**31:
        return pa.array(values, pa.string())  # beyond 32-bit offsets: pa.array decides
    buffers = [
        _validity(np, pa, missing),
        pa.py_buffer(offsets.astype(np.int32)),
        pa.py_buffer(b"".join(encoded)),
    ]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)
