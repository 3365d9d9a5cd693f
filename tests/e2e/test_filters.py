"""numcodecs filters in v2 arrays (delta, fixedscaleoffset, quantize, bitround, astype, shuffle)
both ways with Debian's zarr 2.13: zarrd reads what zarr 2.13 wrote, and zarr 2.13 reads what
zarrd wrote, whose chunk files are byte for byte zarr 2.13's own. Lossy filters are held to what
zarr 2.13 (numcodecs) makes of the same data, not to the input."""
import numpy as np
import pytest
import zarr
from numcodecs import AsType, BitRound, Delta, FixedScaleOffset, Quantize, Shuffle, Zlib

import zarrd

RNG = np.random.default_rng(7)
WALK = np.cumsum(RNG.integers(-40, 40, size=(37, 23)), axis=0)
FLOATS = RNG.standard_normal((37, 23)) * 100

# (name, dtype, values, numcodecs filters)
CASES = [
    ("delta_i4", "<i4", WALK, [Delta("<i4")]),
    ("delta_i8_as_i2", "<i8", WALK, [Delta("<i8", astype="<i2")]),
    ("delta_shuffle_i2", "<i2", WALK, [Delta("<i2"), Shuffle(2)]),
    ("delta_f8_be", ">f8", FLOATS, [Delta(">f8")]),
    ("fso_f8_u2", "<f8", FLOATS, [FixedScaleOffset(offset=-400, scale=20, dtype="<f8",
                                                   astype="<u2")]),
    ("fso_f4", "<f4", FLOATS, [FixedScaleOffset(offset=1.5, scale=3, dtype="<f4")]),
    ("quantize_f8_f4", "<f8", FLOATS, [Quantize(digits=2, dtype="<f8", astype="<f4")]),
    ("bitround_f4", "<f4", FLOATS, [BitRound(keepbits=5)]),
    ("astype_f8_f4", "<f8", FLOATS, [AsType(encode_dtype="<f4", decode_dtype="<f8")]),
    ("shuffle_f8_F", "<f8", FLOATS, [Shuffle(8)]),
]
# Float deltas round too: their cumulative sums are not the input.
LOSSY = {"fso_f8_u2", "fso_f4", "quantize_f8_f4", "bitround_f4", "astype_f8_f4", "delta_f8_be"}


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


def write_with_zarr(path, dtype, values, filters, order="C"):
    z = zarr.open_array(str(path), mode="w", shape=values.shape, chunks=(10, 8), dtype=dtype,
                        filters=filters, compressor=Zlib(1), order=order, fill_value=0)
    z[...] = values
    return z


@pytest.mark.parametrize("name,dtype,values,filters", CASES, ids=[c[0] for c in CASES])
def test_zarrd_reads_what_zarr2_wrote(client, server, name, dtype, values, filters):
    order = "F" if name.endswith("_F") else "C"
    z = write_with_zarr(server.workdir / "data" / name, dtype, values, filters, order)
    expected = z[...]  # what numcodecs decodes: the input for lossless filters
    if name not in LOSSY:
        np.testing.assert_array_equal(expected, values.astype(dtype))
    a = client.open_array("local", name)
    got = a[...]
    assert got.dtype == np.dtype(dtype).newbyteorder("<")
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(a[3:29:2, 5], expected[3:29:2, 5])
    assert [f["id"] for f in a.filters] == [f.codec_id for f in filters]


@pytest.mark.parametrize("name,dtype,values,filters", CASES, ids=[c[0] for c in CASES])
def test_zarr2_reads_what_zarrd_wrote(client, server, name, dtype, values, filters):
    if dtype.startswith(">"):
        pytest.skip("the Python client creates little-endian arrays")
    order = "F" if name.endswith("_F") else "C"
    configs = [f.get_config() for f in filters]  # numcodecs-like dicts, as zarr-python takes
    a = client.create_array("local", name, shape=values.shape, dtype=dtype, chunks=(10, 8),
                            zarr_format=2, compressors={"id": "zlib", "level": 1},
                            filters=configs, order=order)
    a[...] = values.astype(dtype)
    z = zarr.open_array(str(server.workdir / "data" / name), mode="r")
    assert [f.get_config() for f in z.filters] == configs
    reference = write_with_zarr(server.workdir / "reference" / name, dtype, values, filters, order)
    np.testing.assert_array_equal(z[...], reference[...])
    if name not in LOSSY:
        np.testing.assert_array_equal(z[...], values.astype(dtype))
    for key in ("0.0", "1.2", "3.2"):  # whole, whole, and an edge chunk
        ours = (server.workdir / "data" / name / key).read_bytes()
        assert ours == (server.workdir / "reference" / name / key).read_bytes(), key


def test_v3_numcodecs_names(client, server):
    """v3 arrays take filters as zarr-python 3 writes them ("numcodecs.delta"); their chunks hold
    numcodecs' encoding."""
    values = WALK.astype("<i4")
    a = client.create_array("local", "v3delta", shape=values.shape, dtype="int32",
                            chunks=(37, 23), compressors=None,
                            filters=[{"id": "delta", "dtype": "<i4"}, {"id": "shuffle"}])
    assert [c["name"] for c in a.metadata["codecs"]] == \
        ["numcodecs.delta", "bytes", "numcodecs.shuffle"]
    a[...] = values
    np.testing.assert_array_equal(a[...], values)
    stored = (server.workdir / "data" / "v3delta" / "c" / "0" / "0").read_bytes()
    assert stored == bytes(Shuffle(4).encode(Delta("<i4").encode(values)))


def test_unknown_and_misplaced_filters_are_refused(client):
    with pytest.raises(zarrd.errors.InvalidArgumentError, match="categorize"):
        client.create_array("local", "cat", shape=(4,), dtype="<i4", zarr_format=2,
                            filters=[{"id": "categorize", "labels": ["a"], "dtype": "<U1"}])
    with pytest.raises(zarrd.errors.InvalidArgumentError, match="dtype"):
        client.create_array("local", "wrong", shape=(4,), dtype="<i4", zarr_format=2,
                            filters=[{"id": "delta", "dtype": "<i2"}])
