"""Arrow arrays built from numpy buffers (collateral.store.arrays) are pa.array's: the
same type, values, nulls and errors, for every kind of value a run stores; and a run
imports no pandas."""

import math
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collateral.store.arrays import array

TYPES = [
    None,
    pa.bool_(),
    pa.int32(),
    pa.int64(),
    pa.uint32(),
    pa.uint64(),
    pa.float64(),
    pa.string(),
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
)


def same(ours, theirs) -> None:
    assert ours.type == theirs.type
    assert ours.null_count == theirs.null_count and len(ours) == len(theirs)
    for a, b in zip(ours.to_pylist(), theirs.to_pylist(), strict=True):
        if isinstance(a, float) and math.isnan(a):
            assert isinstance(b, float) and math.isnan(b)
        else:
            assert type(a) is type(b) and a == b
    ours.validate(full=True)


def outcome(f):
    try:
        return f(), None
    except (
        pa.ArrowInvalid,
        pa.ArrowTypeError,
        pa.ArrowNotImplementedError,
        OverflowError,
        TypeError,
        ValueError,
    ) as e:
        return None, type(e)


@settings(max_examples=600, deadline=None)
@given(
    values=st.one_of(
        st.lists(SCALARS, max_size=8),
        st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=8),
        st.lists(st.one_of(st.none(), st.floats()), max_size=8),
        st.lists(st.one_of(st.none(), st.text()), max_size=8),
        st.lists(st.one_of(st.none(), st.booleans()), max_size=8),
    ),
    typ=st.sampled_from(TYPES),
    masked=st.booleans(),
    data=st.data(),
)
def test_lists_are_typed_and_refused_as_pa_array_does(values, typ, masked, data):
    mask = (
        np.array(
            data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))), bool
        )
        if masked
        else None
    )
    ours, our_error = outcome(lambda: array(values, typ, mask))
    theirs, their_error = outcome(lambda: pa.array(values, type=typ, mask=mask))
    assert our_error == their_error
    if theirs is not None:
        same(ours, theirs)


@pytest.mark.parametrize(
    "values",
    [
        np.array([1.5, np.nan, -0.0, np.inf]),
        np.array([3, -1, 2**40], np.int64),
        np.array([0, 7], np.uint32),
        np.array([True, False, True]),
        np.array([], np.float64),
    ],
)
@pytest.mark.parametrize("masked", [False, True])
def test_numpy_columns_with_their_null_masks(values, masked):
    """The core's typed columns and their null masks, as a batch hands them over."""
    mask = (np.arange(len(values)) % 2 == 1) if masked else None
    natural = pa.from_numpy_dtype(values.dtype)
    for typ in (None, natural):
        same(array(values, typ, mask), pa.array(values, type=typ, mask=mask))


def test_what_it_does_not_build_goes_to_pa_array():
    """Nested values, numpy scalars in a list, another numpy dtype than the type asked
    for, a type named by a string, a float32 asked of ints, a masked array, a mask that
    is a list: pa.array's own result, or its error."""
    for values, typ, mask in (
        ([[1, 2], None], None, None),
        ([np.float64(1.5), 2.0], None, None),
        (np.array([1, 2], np.int64), pa.float64(), None),
        (np.array(["a"]), None, None),
        (np.array([1.5, 2.5], ">f8"), None, None),  # big-endian: pa.array refuses it
        (np.array([1.0, 2.0, 3.0])[::2], None, None),  # strided
        ([1, 2], "int32", None),
        ([2**24 + 1, 0.5], pa.float32(), None),  # a float32 cannot hold it: refused
        (np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]), None, None),  # its own mask
        (np.ma.masked_array([1, 2], mask=[0, 1]), None, np.array([True, False])),
        (np.array([1, 2]), None, [True, False]),  # a list mask: refused for numpy values
        ((1, 2), None, None),
    ):
        ours, our_error = outcome(lambda v=values, t=typ, m=mask: array(v, t, m))
        theirs, their_error = outcome(lambda v=values, t=typ, m=mask: pa.array(v, type=t, mask=m))
        assert our_error == their_error, (values, typ, mask)
        if theirs is not None:
            same(ours, theirs)


def test_a_run_imports_no_pandas_nor_pyarrow_compute(tmp_path):
    """`collateral run` stores a sweep (summary and traces) without importing pandas:
    pyarrow's pa.array would import it (0.3-0.6 s) in the first worker to finish; nor
    pyarrow.compute (~60 ms; Table.take and filtering would)."""
    exp = tmp_path / "e.toml"
    exp.write_text(
        '[experiment]\nname = "p"\ntrials = 2\ntraces = ["cwnd", "cbr"]\n'
        '[scenario]\nlink = "adsl1"\nduration = "5s"\nwarmup = "1s"\ntcp = [{}]\ncbr = [{}]\n'
        '[sweep]\n"queue.limit" = ["20kB", "40kB"]\n"tags.kind" = ["a"]\n'
    )
    code = (
        "import sys; from collateral.cli import main; rc = main(['run', sys.argv[1], '-o',"
        " sys.argv[2]]); print('pandas' in sys.modules, 'pyarrow.compute' in sys.modules);"
        " sys.exit(rc)"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(exp), str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "False False", "pandas or pyarrow.compute"
