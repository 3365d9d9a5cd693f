"""Every numeric array in the peer fixtures reads with the values tensorstore read from it."""
import hashlib
import json

import numpy as np
import pytest
import zarr

from conftest import FIXTURES, ToolError, zarrd_read

EXPECTED = json.loads((FIXTURES / "expected-tensorstore.json").read_text())

# Arrays tensorstore could not open although their data types are numeric. Their values come
# from a sibling written by the same script with the same data and another codec.
SIBLINGS = {
    "zarrita/v3/data.zarr/1d.chunked.i2": "zarrita/v3/data.zarr/1d.contiguous.raw.i2",
    "zarrs/v3_zarr_python/array_zlib.zarr": "zarrs/v3_zarr_python/array_none.zarr",
    "zarrs/v3_zarr_python/array_bz2.zarr": "zarrs/v3_zarr_python/array_none.zarr",
    # Debian's numcodecs predates zstd's "checksum" field, so zarr-python 2 cannot open it.
    "zarrita/v2/data.zarr/1d.contiguous.zstd.i2": "zarrita/v2/data.zarr/1d.contiguous.raw.i2",
}


# zarrs' zarr_python_compat arrays of zarr-python 3's datetime types hold one pattern, in the
# array's unit, padded with the fill value (NaT).
_DATES = ["1970-01-01", "NaT", "2005-02-03", "2005-02-03T04:05", "2005-02-03T04:05:06"]
_DELTAS = [np.timedelta64(365, "D"), np.timedelta64(2, "W"), np.timedelta64(3, "D"),
           np.timedelta64(4, "h"), np.timedelta64(5, "m"), np.timedelta64(6, "s"),
           np.timedelta64(7, "s"), np.timedelta64(8, "s"), np.timedelta64(9, "s"),
           np.timedelta64(0, "s")]


def time_pattern(key, shape):
    name = key.rsplit("/", 1)[-1].removesuffix(".zarr")  # "datetime64[10ms]"
    dtype = np.dtype(name)
    values = np.array(_DATES, "M8[s]") if dtype.kind == "M" else np.array(_DELTAS, "m8[s]")
    out = np.full(shape, np.array("NaT", dtype))
    out[: len(values)] = values.astype(dtype)
    return out


def delta_by_numcodecs(array_dir):
    """A one-chunk v3 array of [transpose,] numcodecs.delta and little-endian bytes, decoded by
    numcodecs' Delta and numpy's transpose."""
    from numcodecs import Delta
    meta = json.loads((array_dir / "zarr.json").read_text())
    shape = meta["shape"]
    dtype = np.dtype(meta["data_type"]).newbyteorder("<")
    order = next((c["configuration"]["order"] for c in meta["codecs"] if c["name"] == "transpose"),
                 list(range(len(shape))))
    raw = (array_dir / "c" / "/".join(["0"] * len(shape))).read_bytes()
    encoded = Delta(dtype).decode(np.frombuffer(raw, dtype)).reshape([shape[i] for i in order])
    return encoded.transpose(np.argsort(order))


def split(key):
    root, _, path = key.partition("/data.zarr/")
    if path:
        return FIXTURES / (root + "/data.zarr"), path
    return FIXTURES / key, ""


def check_against(expected, values):
    assert values.dtype.str == expected["dtype"]
    assert list(values.shape) == expected["shape"]
    flat = values.reshape(-1)
    first, last = expected["first"], expected["last"]
    np.testing.assert_array_equal(flat[: len(first)], np.array(first, dtype=values.dtype))
    np.testing.assert_array_equal(flat[len(flat) - len(last):], np.array(last, dtype=values.dtype))
    digest = hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()
    assert digest == expected["sha256_c_order_le"]


READABLE = sorted(k for k, v in EXPECTED.items() if "error" not in v)


@pytest.mark.parametrize("key", READABLE)
def test_reads_what_tensorstore_read(key, tmp_path):
    root, path = split(key)
    values = zarrd_read(root, path, "", tmp_path)
    check_against(EXPECTED[key], values)


def test_arrays_tensorstore_could_not_read(tmp_path, capsys):
    """Unreadable ones must fail with a clear error; readable ones need a second source."""
    refused, checked = [], []
    for key in sorted(k for k, v in EXPECTED.items() if "error" in v):
        root, path = split(key)
        try:
            values = zarrd_read(root, path, "", tmp_path)
        except ToolError as e:
            assert e.code in ("INVALID_ARGUMENT", "FAILED_PRECONDITION"), e.message
            assert len(e.message) > 20
            refused.append((key, e.message))
            continue
        if key in SIBLINGS:
            check_against(EXPECTED[SIBLINGS[key]], values)
        elif "zarr_python_compat/datetime64" in key or "zarr_python_compat/timedelta64" in key:
            expected = time_pattern(key, values.shape)
            assert values.dtype == expected.dtype
            np.testing.assert_array_equal(values.view("<i8"), expected.view("<i8"))
        elif key == "zarrs/issue_287.zarr/meta/date":  # three days from 2023-01-01, in ms
            expected = np.arange("2023-01-01", "2023-01-04", dtype="M8[D]").astype("M8[ms]")
            assert values.dtype == expected.dtype
            np.testing.assert_array_equal(values, expected)
        elif "numcodecs.delta" in (root / path / "zarr.json").read_text() \
                if (root / path / "zarr.json").exists() else False:
            expected = delta_by_numcodecs(root / path)
            assert values.dtype == expected.dtype
            np.testing.assert_array_equal(values, expected)
        elif (root / path / ".zarray").exists():
            expected = zarr.open_array(str(root / path), mode="r")[...]
            np.testing.assert_array_equal(values, expected)
            assert values.dtype == expected.dtype.newbyteorder("<")
        else:
            pytest.fail(f"{key}: zarrd reads it but the test has no second source for its values")
        checked.append(key)
    with capsys.disabled():
        print(f"\nread with a second source: {len(checked)}: {', '.join(checked)}")
        print(f"not read by zarrd ({len(refused)}), each with its error:")
        for key, message in refused:
            print(f"  {key}: {message}")
    assert len(checked) >= 2
