"""zarr-python 3's array and group surface in the Python client: chunk and shard shapes, codecs,
order, append and out=, hierarchy helpers, open modes, hex fill values, and zarr-python's chunk
guess; expected values from numpy, Debian's zarr 2.13 (which opens what zarrd wrote) and the
v3 specification's encoding of fill values."""
import struct

import numpy as np
import pytest
import zarr
import zarr.util

import zarrd


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


def test_chunks_none_guesses_as_zarr_python(client, server):
    cases = [((1000, 1000), "float64"), ((5_000_000,), "int8"), ((100, 200, 300), "float32"),
             ((7,), "uint16"), ((0, 40), "int32"), ((4096, 4096, 3), "uint8")]
    for i, (shape, dtype) in enumerate(cases):
        a = client.create_array("local", f"guess{i}", shape=shape, dtype=dtype, zarr_format=2)
        expected = zarr.util.guess_chunks(shape, np.dtype(dtype).itemsize)
        assert a.chunks == tuple(expected), (shape, dtype)
        assert zarr.open_array(str(server.workdir / "data" / f"guess{i}"), mode="r").chunks == \
            tuple(expected)
    b = client.create_array("local", "int_chunks", shape=(30, 20), dtype="i4", chunks=8)
    assert b.chunks == (8, 8)


def test_sharded_chunks_shards_nchunks_and_codec_parts(client):
    a = client.create_array("local", "s", shape=(50, 40), dtype="int16", chunks=(5, 8),
                            shards=(10, 16), compressors="gzip")
    assert a.chunks == (5, 8) and a.shards == (10, 16)
    assert a.nchunks == 10 * 5  # ceil(50/5) * ceil(40/8) inner chunks
    assert a.serializer == {"name": "bytes", "configuration": {"endian": "little"}}
    assert a.compressors == ({"name": "gzip", "configuration": {"level": 1}},)
    assert a.filters == () and a.order == "C"
    values = np.arange(2000, dtype="int16").reshape(50, 40)
    a[:] = values
    # Blocks are the storage grid's cells (shards), as zarr-python's block selection.
    np.testing.assert_array_equal(a.blocks[1, 2], values[10:20, 32:40])
    plain = client.create_array("local", "p", shape=(9, 9), dtype="f4", chunks=(4, 4), order="F",
                                compressors=None)
    assert plain.shards is None and plain.chunks == (4, 4) and plain.nchunks == 9
    assert plain.order == "F" and plain.compressors == ()
    assert plain.filters == ({"name": "transpose", "configuration": {"order": [1, 0]}},)
    v2 = client.create_array("local", "v2", shape=(9,), dtype="i8", chunks=(4,), zarr_format=2,
                             compressors="zlib", order="F")
    assert v2.order == "F" and v2.serializer is None and v2.filters == ()
    assert v2.compressors == ({"id": "zlib", "level": 1},)
    assert (v2.name, v2.basename) == ("/v2", "v2")
    text = repr(a.info)
    for row in ("Shard shape", "(10, 16)", "Chunk shape", "(5, 8)", "int16", "4000"):
        assert row in text, text


def test_append_grows_and_writes_as_numpy_concatenate(client, server):
    rng = np.random.default_rng(1)
    first = rng.integers(0, 100, (7, 5)).astype("int32")
    a = client.create_array("local", "ap", shape=first.shape, dtype="int32", chunks=(3, 2),
                            zarr_format=2)
    a[:] = first
    more = rng.integers(0, 100, (4, 5)).astype("int32")
    assert a.append(more) == (11, 5)
    side = rng.integers(0, 100, (11, 3)).astype("int32")
    assert a.append(side, axis=1) == (11, 8)
    expected = np.concatenate([np.concatenate([first, more]), side], axis=1)
    np.testing.assert_array_equal(a[:], expected)
    np.testing.assert_array_equal(zarr.open_array(str(server.workdir / "data" / "ap"), mode="r")[:],
                                  expected)
    with pytest.raises(ValueError):
        a.append(np.zeros((2, 7), "int32"))  # dimension 1 must be 8


def test_out_receives_the_result(client):
    values = np.arange(120, dtype="float64").reshape(10, 12)
    a = client.create_array("local", "o", shape=values.shape, dtype="float64", chunks=(4, 5))
    a[:] = values
    out = np.full((3, 12), -1.0)
    assert a.get((slice(2, 5),), out=out) is out
    np.testing.assert_array_equal(out, values[2:5])
    pts = np.empty(3)
    a.get_coordinate_selection(([1, 9, 4], [0, 11, 5]), out=pts)
    np.testing.assert_array_equal(pts, values[[1, 9, 4], [0, 11, 5]])
    with pytest.raises(ValueError):
        a.get(0, out=np.empty(5))


def test_hierarchy_helpers(client):
    root = client.create_group("local", "h")
    root.create_group("g1").create_array("deep", shape=(3,), dtype="u1")
    root.create_array("a1", shape=(2, 2), dtype="i2")
    root.create_group("g2")
    assert len(root) == 3
    assert sorted(root.array_keys()) == ["a1"] and sorted(root.group_keys()) == ["g1", "g2"]
    assert [n for n, _ in root.members()] == ["a1", "g1", "g2"]
    assert [n for n, _ in root.members(max_depth=None)] == ["a1", "g1", "g1/deep", "g2"]
    tree = repr(root.tree())
    assert tree.splitlines()[0] == "/h" and "deep (3,) uint8" in tree, tree
    assert root.require_group("g2").path == "h/g2"
    assert root.require_group("g3").path == "h/g3" and len(root) == 4
    same = root.require_array("a1", shape=(2, 2), dtype="i2")
    assert same.path == "h/a1"
    with pytest.raises(TypeError):
        root.require_array("a1", shape=(3, 2), dtype="i2")
    with pytest.raises(TypeError):
        root.require_group("a1")
    made = root.require_array("a2", shape=(4,), dtype="f4")
    assert made.shape == (4,)
    del root["g1"]
    assert "g1" not in root and len(root) == 4
    with pytest.raises(zarrd.NotFoundError):
        client.open("local", "h/g1/deep")
    assert "No. arrays" in repr(root.info)


def test_open_modes(client):
    with pytest.raises(zarrd.NotFoundError):
        client.open("local", "m", mode="r+")
    g = client.open("local", "m", mode="a")  # absent: created, a group without shape
    assert isinstance(g, zarrd.Group)
    a = client.open("local", "m/x", mode="w-", shape=(4,), dtype="i4", chunks=(2,))
    a[:] = [1, 2, 3, 4]
    with pytest.raises(zarrd.AlreadyExistsError):
        client.open("local", "m/x", mode="w-", shape=(4,), dtype="i4")
    assert client.open("local", "m/x", mode="a")[:].tolist() == [1, 2, 3, 4]
    ro = client.open("local", "m/x", mode="r")
    np.testing.assert_array_equal(ro[:], [1, 2, 3, 4])
    for write in (lambda: ro.__setitem__(0, 5), lambda: ro.resize(8),
                  lambda: ro.attrs.__setitem__("k", 1), lambda: ro.append(np.zeros(2, "i4"))):
        with pytest.raises(zarrd.errors.ReadOnlyError):
            write()
    ro_group = client.open_group("local", "m", mode="r")
    assert ro_group["x"].read_only
    with pytest.raises(PermissionError):
        ro_group.create_group("y")
    replaced = client.open("local", "m/x", mode="w", shape=(2,), dtype="f8", chunks=(2,))
    assert replaced.shape == (2,) and replaced[:].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        client.open("local", "m", mode="rw")


def test_hex_fill_values(client, server):
    import json
    # v3 writes a float fill value as its IEEE 754 bits in hex; here a NaN with a payload.
    bits = 0x7FC00001
    expected = struct.unpack(">f", bits.to_bytes(4, "big"))[0]
    a = client.create_array("local", "hx", shape=(3,), dtype="float32", chunks=(3,))
    meta_path = server.workdir / "data" / "hx" / "zarr.json"
    meta = json.loads(meta_path.read_text())
    meta["fill_value"] = "0x7fc00001"
    meta_path.write_text(json.dumps(meta))
    b = client.open_array("local", "hx")
    got = b.fill_value
    assert got.dtype == np.float32
    assert np.array(got).view("<u4") == np.array(expected, np.float32).view("<u4") == bits
    del a


def test_xarray_backend_options_and_fill_values_as_xarrays_zarr_backend(client, server):
    import xarray as xr
    from zarrd.xarray_backend import ZarrdBackendEntrypoint, open_groups
    values = np.array([[0, 1, -1], [2, -1, 0]], "int32")
    # v2: zarr 2.13 writes it, xarray's own zarr backend is the reference.
    root = zarr.open_group(str(server.workdir / "data" / "xr2"), mode="w")
    arr = root.create_dataset("v", data=values, fill_value=-1)
    arr.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    inner = root.create_group("sub")
    w = inner.create_dataset("w", data=np.arange(4, dtype="f8"), fill_value=None)
    w.attrs["_ARRAY_DIMENSIONS"] = ["t"]
    expected = xr.open_zarr(str(server.workdir / "data" / "xr2"), consolidated=False)
    kw = {"engine": ZarrdBackendEntrypoint, "address": server.unix}
    with xr.open_dataset("zarrd://local/xr2", **kw) as got:
        np.testing.assert_array_equal(got["v"].values, expected["v"].values)  # -1 masked as NaN
        assert np.isnan(got["v"].values[0, 2])
    with xr.open_dataset("zarrd://local", group="xr2/sub", zarr_format=2, consolidated=False,
                         **kw) as got:
        np.testing.assert_array_equal(got["w"].values, np.arange(4.0))
    with pytest.raises(ValueError):
        xr.open_dataset("zarrd://local/xr2", zarr_format=3, **kw)
    # v3: the array's fill value (0) is no _FillValue, as in xarray's zarr backend.
    g3 = client.create_group("local", "xr3")
    a3 = g3.create_array("v", shape=values.shape, dtype="int32", chunks=(1, 3),
                         dimension_names=("y", "x"))
    a3[:] = values
    with xr.open_dataset("zarrd://local/xr3", **kw) as got:
        assert got["v"].dtype == np.int32
        np.testing.assert_array_equal(got["v"].values, values)
    groups = open_groups("zarrd://local/xr2", address=server.unix)
    assert sorted(groups) == ["/", "/sub"]
    np.testing.assert_array_equal(groups["/sub"]["w"].values, np.arange(4.0))
    for ds in groups.values():
        ds.close()
