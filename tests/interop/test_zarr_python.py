"""Interop with Debian's zarr-python 2 (Zarr v2), both ways, every numeric dtype x compressor x order."""
import itertools
import json

import numcodecs
import numpy as np
import pytest
import zarr

from conftest import ToolError, run_tool, zarrd_create, zarrd_read, zarrd_write

DTYPES = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
          "<c8", "<c16", ">i2", ">u4", ">f8", ">c16", "<M8[ns]", "<m8[s]", ">M8[D]", ">m8[10ms]",
          "<M8[as]", "<m8[Y]"]
COMPRESSORS = {
    "none": None,
    "zstd": numcodecs.Zstd(level=3),
    "blosc-lz4-shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-zstd-bitshuffle": numcodecs.Blosc(cname="zstd", clevel=3,
                                             shuffle=numcodecs.Blosc.BITSHUFFLE),
    "zlib": numcodecs.Zlib(level=1),
}
SHAPE, CHUNKS = (13, 7, 5), (4, 3, 2)
CASES = list(itertools.product(DTYPES, COMPRESSORS, "CF"))


def sample(dtype, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        values = rng.integers(0, 2, SHAPE).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, SHAPE, dtype=dt.newbyteorder("="), endpoint=True)
    elif dt.kind in "mM":  # int64 counts of the unit, NaT among them
        values = rng.integers(-2**62, 2**62, SHAPE).astype("<i8").view(dt.newbyteorder("<"))
        values.flat[::13] = np.array("NaT", dt)
    elif dt.kind == "f":
        values = (rng.standard_normal(SHAPE) * 100).astype(dt)
        values.flat[::17] = np.nan
    else:
        values = (rng.standard_normal(SHAPE) + 1j * rng.standard_normal(SHAPE)).astype(dt)
    values = values.astype(dt)
    values[4:8, 3:6, :] = fill_for(dt)  # whole chunks of fill: not stored with write_empty_chunks=False
    return values


def fill_for(dt):
    return {"b": False, "i": -3, "u": 7, "f": 1.5, "c": 0, "M": -3, "m": 5}[dt.kind]


@pytest.mark.parametrize("dtype,compressor,order", CASES)
def test_zarrd_reads_what_zarr_python_wrote(dtype, compressor, order, tmp_path):
    values = sample(dtype, seed=hash((dtype, compressor, order)) % 2**32)
    root = tmp_path / "store"
    z = zarr.open_array(str(root / "a"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                        compressor=COMPRESSORS[compressor], order=order,
                        fill_value=fill_for(np.dtype(dtype)), write_empty_chunks=False)
    z[...] = values
    got = zarrd_read(root, "a", "", tmp_path)
    np.testing.assert_array_equal(got, values)
    assert got.dtype == np.dtype(dtype).newbyteorder("<")
    for sel in ["2, ::-1, 1:4", "::-3, 5:1:-2, ...", "-1", "3:11:4, :, -2"]:
        np.testing.assert_array_equal(zarrd_read(root, "a", sel, tmp_path),
                                      eval(f"values[{sel}]"), err_msg=sel)


@pytest.mark.parametrize("dtype,compressor,order", CASES)
def test_zarr_python_reads_what_zarrd_wrote(dtype, compressor, order, tmp_path):
    values = sample(dtype, seed=1 + hash((dtype, compressor, order)) % 2**32)
    root = tmp_path / "store"
    comp = COMPRESSORS[compressor]
    zarray = {"zarr_format": 2, "shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": dtype,
              "compressor": comp.get_config() if comp else None,
              "fill_value": fill_for(np.dtype(dtype)), "order": order, "filters": None}
    zarrd_create(root, "g/a", zarray, tmp_path)
    zarrd_write(root, "g/a", "", values, tmp_path)
    z = zarr.open_array(str(root / "g" / "a"), mode="r")
    assert z.dtype == np.dtype(dtype)
    assert z.order == order
    np.testing.assert_array_equal(z[...], values)
    # Whole chunks of the fill value were not stored.
    assert not (root / "g" / "a" / "1.1.0").exists()
    assert (root / "g" / "a" / "0.0.0").exists()


def test_partial_writes_merge_with_zarr_python_data(tmp_path):
    root = tmp_path / "store"
    values = np.arange(13 * 7 * 5, dtype="<i4").reshape(SHAPE)
    z = zarr.open_array(str(root / "a"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="<i4",
                        compressor=numcodecs.Zstd(level=1), fill_value=0)
    z[...] = values
    patch = -np.arange(3 * 7 * 2, dtype="<i4").reshape(3, 7, 2)
    zarrd_write(root, "a", "1:10:3, ::-1, 3:5", patch, tmp_path)
    values[1:10:3, ::-1, 3:5] = patch
    np.testing.assert_array_equal(zarr.open_array(str(root / "a"), mode="r")[...], values)


def test_errors_name_the_problem(tmp_path):
    root = tmp_path / "store"
    zarr.open_array(str(root / "a"), mode="w", shape=(4, 4), chunks=(2, 2), dtype="<f4")
    with pytest.raises(ToolError) as e:
        zarrd_read(root, "a", "4, 0", tmp_path)
    assert e.value.code == "OUT_OF_RANGE"
    assert "index 4 is out of bounds for axis 0 with size 4" in e.value.message
    with pytest.raises(ToolError) as e:
        zarrd_read(root, "missing", "", tmp_path)
    assert e.value.code == "NOT_FOUND"
    with pytest.raises(ToolError) as e:
        zarrd_read(root, "a", "::0", tmp_path)
    assert e.value.code == "INVALID_ARGUMENT"
    # A corrupt chunk names the array and the chunk key.
    (root / "a" / "1.0").write_bytes(b"garbage that is not blosc")
    with pytest.raises(ToolError) as e:
        zarrd_read(root, "a", "", tmp_path)
    assert e.value.code == "DATA_LOSS"
    assert "'a/1.0'" in e.value.message
