"""String arrays both ways with Debian's zarr 2.13 (numcodecs 0.11): variable-length "|O" with
vlen-utf8 / vlen-bytes, fixed-length "|S<n>" and "<U<n>", the categorize filter; zarr-python 3's
v3 "string" fixtures; every kind of selection against numpy; the limits and refusals."""
import base64
import json
import shutil
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

import zarrd
from conftest import Server

RNG = np.random.default_rng(22)
WORDS = np.array(["", "a", "héllo", "wörld €", "😀", "x" * 70, "tab\tnl\n", "nul\0in"], object)
TEXT = WORDS[RNG.integers(0, len(WORDS), size=(13, 9))]
BYTES = np.array([w.encode() for w in TEXT.reshape(-1)], object).reshape(TEXT.shape)
PEERS = Path(__file__).resolve().parents[1] / "data/peers/zarrita/v3/data.zarr"


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


def zarr2(server, name, **kw):
    return zarr.open_array(str(server.workdir / "data" / name), mode="w", **kw)


# (name, zarr 2.13 keywords, values)
CASES = [
    ("vlen_utf8", dict(dtype=object, object_codec=numcodecs.VLenUTF8(), fill_value=""), TEXT),
    ("vlen_utf8_blosc", dict(dtype=str, object_codec=numcodecs.VLenUTF8(),
                             compressor=numcodecs.Blosc("lz4", 5, 1)), TEXT),
    ("vlen_bytes", dict(dtype=object, object_codec=numcodecs.VLenBytes(),
                        compressor=numcodecs.Zlib(1)), BYTES),
    ("fixed_S", dict(dtype="|S9", fill_value=b"ab"),
     np.array([w.encode()[:9] for w in TEXT.reshape(-1)], "S9").reshape(TEXT.shape)),
    ("fixed_U", dict(dtype="<U8", fill_value="zz"), TEXT.astype("<U8")),
    ("fixed_U_big", dict(dtype=">U8"), TEXT.astype(">U8")),
    ("categorize_U", dict(dtype="<U7", filters=[numcodecs.Categorize(["a", "héllo", "😀"], "<U7")]),
     TEXT.astype("<U7")),
    ("categorize_O", dict(dtype=object,
                          filters=[numcodecs.Categorize(["", "wörld €", "a"], object, astype="<u2")]),
     TEXT),
]


@pytest.mark.parametrize("name,kw,values", CASES, ids=[c[0] for c in CASES])
def test_zarrd_reads_what_zarr2_wrote(client, server, name, kw, values):
    z = zarr2(server, name, shape=(13, 9), chunks=(4, 5), **kw)
    z[:11, :] = values[:11]  # the last rows stay unwritten: fill values
    want = z[...]
    if want.dtype == object:  # zarr 2 fills "|O" chunks it lacks with fill_value 0; zarrd: ""
        empty = b"" if name == "vlen_bytes" else ""
        want = np.array([empty if isinstance(x, int) else x for x in want.reshape(-1)],
                        object).reshape(want.shape)
    a = client.open_array("local", name)
    got = a[...]
    if want.dtype == object:
        assert got.dtype == object
        assert [type(x) for x in got.reshape(-1)] == [type(x) for x in want.reshape(-1)] or \
            name.startswith("categorize")
    else:
        assert got.dtype == want.dtype.newbyteorder("<")
    np.testing.assert_array_equal(got, want)
    # Selections of every kind, against numpy on zarr 2.13's values.
    np.testing.assert_array_equal(a[2:12:3, 1], want[2:12:3, 1])
    np.testing.assert_array_equal(a.oindex[[0, 5, 2], [8, 1]], want[[0, 5, 2]][:, [8, 1]])
    np.testing.assert_array_equal(a.vindex[[0, 5, 12], [8, 1, 1]], want[[0, 5, 12], [8, 1, 1]])
    mask = RNG.random(want.shape) < 0.3
    np.testing.assert_array_equal(a.vindex[mask], want[mask])
    np.testing.assert_array_equal(a.blocks[1, 1], want[4:8, 5:9])
    assert a[3, 4] == want[3, 4]


@pytest.mark.parametrize("name,kw,values", CASES, ids=[c[0] for c in CASES])
def test_zarr2_reads_what_zarrd_wrote(client, server, name, kw, values):
    z = zarr2(server, name, shape=(13, 9), chunks=(4, 5), **kw)
    reference = zarr.open_array(zarr.MemoryStore(), mode="w", shape=(13, 9), chunks=(4, 5), **kw)
    a = client.open_array("local", name)
    a[:11, :] = values[:11]
    reference[:11, :] = values[:11]
    a.oindex[[12], [0, 3]] = values[:1, :2]
    reference.oindex[[12], [0, 3]] = values[:1, :2]
    a.vindex[[12, 12], [8, 7]] = values[1, :2]
    reference.vindex[[12, 12], [8, 7]] = values[1, :2]
    np.testing.assert_array_equal(z[...], reference[...])
    # The chunks zarrd wrote are zarr 2.13's own, byte for byte.
    for key in reference.store.keys():
        if not key.startswith("."):
            assert (server.workdir / "data" / name / key).read_bytes() == reference.store[key], key


def test_v3_string_fixtures_of_zarr_python_3(client, server):
    shutil.copytree(PEERS, server.workdir / "data" / "peers")
    for name, want in [("1d.chunked.string.vlen", ["a", "bb", "", "ccc"])]:
        a = client.open_array("local", "peers/" + name)
        assert a.dtype == object
        got = a[...]
        assert got.shape == (4,)
        assert all(isinstance(x, str) for x in got)
    for path in sorted((server.workdir / "data" / "peers").glob("*string*")):
        a = client.open_array("local", "peers/" + path.name)
        assert a[...].dtype == object, path.name


def test_create_strings_through_the_client(client, server):
    v3 = client.create_array("local", "s3", shape=(5,), dtype=str, chunks=(2,))
    meta = v3.metadata
    assert meta["data_type"] == "string"
    assert [c["name"] for c in meta["codecs"]] == ["vlen-utf8", "zstd"]
    v3[:] = ["x", "yy", "", "é", "😀"]
    np.testing.assert_array_equal(v3[1:4], np.array(["yy", "", "é"], object))
    v3[4] = "last"
    assert v3[4] == "last"
    b = client.create_array("local", "b3", shape=(3,), dtype=bytes, chunks=(2,))
    b[:] = [b"\x00\xff", b"", b"z"]
    assert list(b[...]) == [b"\x00\xff", b"", b"z"]
    v2 = client.create_array("local", "s2", shape=(5,), dtype=str, chunks=(2,), zarr_format=2)
    v2[:] = ["x", "yy", "", "é", "😀"]
    z = zarr.open_array(str(server.workdir / "data" / "s2"), mode="r")
    assert z.dtype == object
    assert json.loads((server.workdir / "data" / "s2" / ".zarray").read_text())["filters"] == \
        [{"id": "vlen-utf8"}]
    np.testing.assert_array_equal(z[...], np.array(["x", "yy", "", "é", "😀"], object))
    u = client.create_array("local", "u2", shape=(3,), dtype="<U4", chunks=(2,), zarr_format=2,
                            fill_value="ab")
    u[1] = "wxyz"
    np.testing.assert_array_equal(zarr.open_array(str(server.workdir / "data" / "u2"))[...],
                                  np.array(["ab", "wxyz", "ab"], "<U4"))


def test_resizing_string_arrays_trims_their_chunks(client, server):
    """Shrinking cuts the edge chunk's strings (fill past the new end), drops chunks past it;
    growing back shows the fill value there. zarr 2.13 reads what is stored."""
    v2 = client.create_array("local", "rs", shape=(10,), dtype=str, chunks=(4,), zarr_format=2,
                             fill_value="-")
    values = np.array(["a", "bb", "", "é", "ee", "f😀", "g", "hh", "i", "jj"], object)
    v2[:] = values
    v2.resize(6)
    z = zarr.open_array(str(server.workdir / "data" / "rs"), mode="r")
    np.testing.assert_array_equal(z[...], values[:6])
    assert not (server.workdir / "data" / "rs" / "2").exists()
    v2.resize(10)
    expected = np.concatenate([values[:6], np.array(["-"] * 4, object)])
    np.testing.assert_array_equal(zarr.open_array(str(server.workdir / "data" / "rs"))[...],
                                  expected)
    np.testing.assert_array_equal(v2[...], expected)


def test_chunks_of_only_the_fill_text_are_not_stored(client, server):
    """As for numbers: a chunk whose strings all equal the fill value is deleted, whichever
    objects hold the text; zarr 2.13 reads the fill value there."""
    v2 = client.create_array("local", "ff", shape=(8,), dtype=str, chunks=(4,), zarr_format=2,
                             fill_value="-")
    v2[:] = ["a", "b", "c", "d", "e", "f", "g", "h"]
    folder = server.workdir / "data" / "ff"
    assert (folder / "0").exists() and (folder / "1").exists()
    v2[4:] = np.array(["-"] * 4, object)
    v2.vindex[[0, 1, 2, 3]] = ["-", "-", "-", "-"]
    assert not (folder / "0").exists() and not (folder / "1").exists()
    np.testing.assert_array_equal(zarr.open_array(str(folder), mode="r")[...],
                                  np.array(["-"] * 8, object))


def test_streamed_and_limited(tmp_path):
    server = Server(tmp_path, {"max_unary_result_bytes": 4096, "max_result_bytes": 1 << 20})
    try:
        values = np.array([("é" * (i % 50)) for i in range(3000)], object)
        z = zarr.open_array(str(server.workdir / "data" / "big"), mode="w", shape=values.shape,
                            chunks=(700,), dtype=str, object_codec=numcodecs.VLenUTF8())
        z[...] = values
        with zarrd.connect(server.unix) as c:
            a = c.open_array("local", "big")
            np.testing.assert_array_equal(a[...], values)  # past the unary limit: streamed
            a[...] = values[::-1]  # more than one piece of input, streamed
            np.testing.assert_array_equal(z[...], values[::-1])
            z[...] = np.array(["x" * 2000] * 3000, object)  # 6 MB of text: past max_result_bytes
            with pytest.raises(zarrd.errors.ResourceExhaustedError, match="max_result_bytes"):
                a[...]
            assert a[5] == "x" * 2000
    finally:
        server.stop()


def test_refusals(client, server, stub):
    from zarrd.v1 import zarrd_pb2 as pb
    z = zarr2(server, "t", shape=(4,), chunks=(2,), dtype=str, object_codec=numcodecs.VLenUTF8())
    z[...] = ["a", "b", "c", "d"]
    with pytest.raises(Exception) as e:
        stub.GetItem(pb.GetItemRequest(store="local", path="t", prototype=pb.PROTOTYPE_DEVICE))
    assert "strings" in str(e.value) and "HOST" in str(e.value)
    assert "INVALID_ARGUMENT" in str(e.value.code())
    a = client.open_array("local", "t")
    # Malformed wire input: lengths past the end, not UTF-8.
    for data in (b"\x01\x00\x00\x00a", b"\x09\x00\x00\x00" + b"x" * 4 * 3,
                 b"".join(b"\x01\x00\x00\x00\xff" for _ in range(4))):
        with pytest.raises(Exception) as e:
            stub.SetItem(pb.SetItemRequest(store="local", path="t", data=data))
        assert "INVALID_ARGUMENT" in str(e.value.code())
    np.testing.assert_array_equal(a[...], np.array(["a", "b", "c", "d"], object))
    # A hostile chunk: its count says more items than the chunk holds.
    (server.workdir / "data" / "t" / "0").write_bytes(
        numcodecs.Zstd(1).encode(b"\xff\xff\xff\x7f") if z.compressor is None
        else z.compressor.encode(b"\xff\xff\xff\x7f"))
    with pytest.raises(zarrd.errors.DataLossError, match="chunk 't/0'"):
        a[...]


def _dataset():
    import pandas as pd
    import xarray as xr
    temp = np.round(RNG.standard_normal((4, 3)) * 10, 2)
    temp[1, 2] = np.nan
    ds = xr.Dataset(
        {"temp": (("time", "station"), temp),
         "label": (("station",), np.array(["north", "söuth", ""], object))},
        coords={"station": np.array(["a", "bb", "ccc"], object),
                "time": pd.date_range("2020-01-01", periods=4, freq="6H")})
    # CF-encoded: stored as int16 with scale_factor, add_offset and _FillValue.
    ds["temp"].encoding = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 5.0,
                           "_FillValue": -9999}
    return ds


@pytest.mark.parametrize("chunks", [None, {}], ids=["numpy", "dask"])
def test_xarray_dataset_written_by_zarr2_reads_through_zarrd(server, chunks):
    import xarray as xr
    from zarrd.xarray_backend import ZarrdBackendEntrypoint
    ds = _dataset()
    ds.to_zarr(str(server.workdir / "data" / "ds"), mode="w", consolidated=True)
    want = xr.open_zarr(str(server.workdir / "data" / "ds")).load()
    with xr.open_dataset("zarrd://local/ds", engine=ZarrdBackendEntrypoint, address=server.unix,
                         chunks=chunks) as got:
        got = got.load()
        xr.testing.assert_identical(got, want)
        assert got["station"].values.tolist() == ["a", "bb", "ccc"]
        assert got["label"].values.tolist() == ["north", "söuth", ""]
        assert got["temp"].encoding["scale_factor"] == 0.01


def test_xarray_dataset_written_through_zarrd_reads_with_zarr2(client, server):
    """The reverse: xarray (zarr 2.13) writes the metadata and coordinates (compute=False), zarrd's
    client writes the CF-encoded data variables; zarr 2.13 reads the same dataset as one xarray
    wrote whole."""
    import xarray as xr
    ds = _dataset()
    ds.to_zarr(str(server.workdir / "data" / "ref"), mode="w", consolidated=True)
    ds.to_zarr(str(server.workdir / "data" / "ds"), mode="w", compute=False, consolidated=True)
    for name in ("temp", "label"):
        var = xr.conventions.encode_cf_variable(ds[name].variable, name=name)
        client.open_array("local", "ds/" + name)[...] = var.values
    with xr.open_zarr(str(server.workdir / "data" / "ds")) as got, \
            xr.open_zarr(str(server.workdir / "data" / "ref")) as want:
        xr.testing.assert_identical(got.load(), want.load())
        assert got["label"].values.tolist() == ["north", "söuth", ""]


V2_STRING_FIXTURES = ["zarrita/v2/data.zarr/" + n for n in (
    "1d.contiguous.S7", "1d.contiguous.U13.be", "1d.contiguous.U13.le", "1d.contiguous.U7",
    "2d.chunked.U7", "3d.chunked.O")] + ["zarrs/zarr_python_compat/" + n for n in (
        "cities_v2.zarr", "fixed_length_utf32_v2_be.zarr", "fixed_length_utf32_v2_le.zarr",
        "str_v2_fv_0.zarr", "str_v2_fv_null.zarr")]


@pytest.mark.parametrize("key", V2_STRING_FIXTURES)
def test_v2_string_fixtures_read_as_zarr2_reads_them(client, server, key):
    src = Path(__file__).resolve().parents[1] / "data/peers" / key
    shutil.copytree(src, server.workdir / "data" / "fx")
    want = zarr.open_array(str(src), mode="r")[...]
    got = client.open_array("local", "fx")[...]
    if want.dtype == object:  # zarr 2's fill 0 (an int) or null (None) of "|O": "" in zarrd
        want = np.array(["" if x is None or isinstance(x, int) else x for x in want.reshape(-1)],
                        object).reshape(want.shape)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype.newbyteorder("<") if want.dtype != object else got.dtype == object


def test_sharded_vlen_strings(client):
    values = np.array([str(i) * (i % 5) for i in range(60)], object).reshape(6, 10)
    a = client.create_array("mem", "sharded", shape=(6, 10), dtype=str, chunks=(2, 5),
                            shards=(6, 10))
    a[...] = values
    np.testing.assert_array_equal(a[...], values)
    a[1:3, 4:9] = "new"
    values[1:3, 4:9] = "new"
    np.testing.assert_array_equal(a[...], values)
    np.testing.assert_array_equal(a.vindex[[0, 5], [9, 3]], values[[0, 5], [9, 3]])


def test_zarrctl_creates_and_prints_strings(server):
    from conftest import zarrctl
    zarrctl(server.unix, "create", "local:zs", "--shape", "3", "--dtype", "string")
    meta = json.loads((server.workdir / "data" / "zs" / "zarr.json").read_text())
    assert meta["data_type"] == "string" and meta["codecs"][0]["name"] == "vlen-utf8"
    zarrctl(server.unix, "create", "local:z2", "--shape", "3", "--dtype", "string",
            "--zarr-format", "2")
    z = zarr.open_array(str(server.workdir / "data" / "z2"))
    z[...] = ["a", "é\n", ""]
    zarrctl(server.unix, "get", "local:z2", "-o", server.workdir / "z2.txt")
    assert [json.loads(line) for line in (server.workdir / "z2.txt").read_text().splitlines()] \
        == ["a", "é\n", ""]
    u = zarr.open_array(str(server.workdir / "data" / "u"), mode="w", shape=(2,), dtype="<U3")
    u[...] = ["ab", "xyz"]
    zarrctl(server.unix, "get", "local:u", "-o", server.workdir / "u.npy")
    np.testing.assert_array_equal(np.load(server.workdir / "u.npy"), u[...])
    b = zarr.open_array(str(server.workdir / "data" / "b"), mode="w", shape=(2,), dtype=object,
                        object_codec=numcodecs.VLenBytes())
    b[...] = [b"\x00\xff", b"z"]
    zarrctl(server.unix, "get", "local:b", "-o", server.workdir / "b.txt")
    assert [base64.b64decode(x) for x in (server.workdir / "b.txt").read_text().split()] == \
        [b"\x00\xff", b"z"]
    zarrctl(server.unix, "copy", "local:b", "local:b_copy")
    np.testing.assert_array_equal(zarr.open_array(str(server.workdir / "data" / "b_copy"))[...],
                                  b[...])
