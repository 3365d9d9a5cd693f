"""Server-side selections against numpy on the same data: orthogonal (oindex), vectorized points
(vindex and numpy's advanced indexing in a[...]), whole-array masks and blocks, reads and writes,
over a real zarrd; seeded random cases of shapes, chunkings, negative and repeated indices."""
import numpy as np
import pytest

import zarrd
from test_metrics import get, scrape
from test_python_client import cp, gpu


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


def numpy_outer(values, key):
    """numpy's outer selection, one axis at a time (np.ix_ semantics, integers dropping)."""
    out, axis = values, 0
    for k in key:
        if isinstance(k, (int, np.integer)):
            out = np.take(out, k, axis=axis)
            continue
        if isinstance(k, np.ndarray):
            out = np.take(out, np.flatnonzero(k) if k.dtype == bool else k, axis=axis)
        else:
            out = out[(slice(None),) * axis + (k,)]
        axis += 1
    return out


def random_slice(rng, n):
    start = int(rng.integers(-n - 2, n + 2)) if rng.random() < 0.7 else None
    stop = int(rng.integers(-n - 2, n + 2)) if rng.random() < 0.5 else None
    step = int(rng.choice([1, 1, 2, 3, -1, -2])) if rng.random() < 0.6 else None
    return slice(start, stop, step)


def random_array(rng, values, chunks, client, name):
    a = client.create_array("local", name, shape=values.shape, dtype=values.dtype, chunks=chunks,
                            overwrite=True)
    a[...] = values
    return a


def random_arrays(rng, client, count, prefix):
    """`count` arrays of 1 to 3 dimensions, random shapes and chunks, written with random values;
    yields (values, chunks, array)."""
    for case in range(count):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(rng.integers(1, 12)) for _ in range(ndim))
        chunks = tuple(int(rng.integers(1, 6)) for _ in range(ndim))
        values = rng.integers(-10**6, 10**6, shape).astype("int32")
        yield values, chunks, random_array(rng, values, chunks, client, f"{prefix}{case}")


def test_random_selections_equal_numpy(client):
    rng = np.random.default_rng(20261203)
    for values, chunks, a in random_arrays(rng, client, 60, "r"):
        shape = values.shape
        for _ in range(6):
            # Orthogonal: per dimension an integer, a slice, an index list or a mask.
            key = []
            for n in shape:
                kind = rng.integers(0, 4)
                if kind == 0:
                    key.append(int(rng.integers(-n, n)))
                elif kind == 1:
                    key.append(random_slice(rng, n))
                elif kind == 2:
                    key.append(rng.integers(-n, n, int(rng.integers(0, 8))))
                else:
                    key.append(rng.random(n) < 0.5)
            key = tuple(key)
            np.testing.assert_array_equal(a.oindex[key], numpy_outer(values, key),
                                          err_msg=f"oindex {key}")
            # Points: broadcast coordinate arrays, here 2-d against 1-d, with slices mixed in
            # (numpy's placement of the point axes).
            pshape = (int(rng.integers(1, 4)), int(rng.integers(0, 4)))
            key = []
            for n in shape:
                kind = rng.integers(0, 4)
                if kind == 0:
                    key.append(random_slice(rng, n))
                elif kind == 1:
                    key.append(int(rng.integers(-n, n)))
                elif kind == 2:
                    key.append(rng.integers(-n, n, pshape))
                else:
                    key.append(rng.integers(-n, n, pshape[1:]))
            key = tuple(key)
            np.testing.assert_array_equal(a[key], values[key], err_msg=f"a[{key}]")
            coords = tuple(rng.integers(-n, n, 5) for n in shape)
            np.testing.assert_array_equal(a.vindex[coords], values[coords])
            mask = rng.random(shape) < 0.3
            np.testing.assert_array_equal(a[mask], values[mask])
            np.testing.assert_array_equal(a.vindex[mask], values[mask])
            np.testing.assert_array_equal(a.get_mask_selection(mask), values[mask])
            # Blocks.
            grid = [-(-n // c) for n, c in zip(shape, chunks)]
            b = tuple(int(rng.integers(-g, g)) if rng.random() < 0.5 else
                      slice(int(rng.integers(0, g + 1)), int(rng.integers(0, g + 2)))
                      for g in grid)
            expected = values[tuple(
                slice(k % g * c, (k % g + 1) * c) if isinstance(k, int) else
                slice(k.indices(g)[0] * c, max(k.indices(g)[:2]) * c) for k, g, c in
                zip(b, grid, chunks))]
            np.testing.assert_array_equal(a.blocks[b], expected, err_msg=f"blocks {b}")


def test_writes_equal_numpy(client):
    rng = np.random.default_rng(7)
    for case in range(30):
        shape = tuple(int(rng.integers(1, 10)) for _ in range(2))
        values = rng.integers(-100, 100, shape).astype("int16")
        a = random_array(rng, values, (3, 4), client, f"w{case}")
        expected = values.copy()
        rows, cols = rng.integers(-shape[0], shape[0], 4), rng.integers(-shape[1], shape[1], 3)
        new = rng.integers(-1000, 1000, (4, 3)).astype("int16")
        a.oindex[rows, cols] = new
        expected[np.ix_(rows, cols)] = new
        points = (rng.integers(-shape[0], shape[0], 6), rng.integers(-shape[1], shape[1], 6))
        new = rng.integers(-1000, 1000, 6).astype("int16")
        a.vindex[points] = new
        expected[points] = new
        mask = rng.random(shape) < 0.4
        a[mask] = 5
        expected[mask] = 5
        a.blocks[-1, 0] = 9
        expected[(shape[0] - 1) // 3 * 3:, :4] = 9
        np.testing.assert_array_equal(a[...], expected, err_msg=str(case))


def test_each_chunk_is_decoded_once(server, client):
    values = np.arange(100 * 60, dtype="float64").reshape(100, 60)
    a = random_array(None, values, (10, 10), client, "once")
    url = server.log_text().split("metrics on ")[1].split()[0]
    rows = np.array([34, 31, 39] * 400)
    cols = np.array([-3, 55, 50] * 400)
    before = get(scrape(url), "zarrd_chunks_total", op="decoded")
    np.testing.assert_array_equal(a.vindex[rows, cols], values[rows, cols])
    cols = [59, 52, 50, 59]
    np.testing.assert_array_equal(a.oindex[rows, cols], values[np.ix_(rows, cols)])
    after = get(scrape(url), "zarrd_chunks_total", op="decoded")
    assert after - before == 2  # chunk (3, 5), once per request


def test_errors(client):
    a = client.create_array("local", "e", shape=(6, 7), dtype="int32", chunks=(4, 4))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 7"):
        a.oindex[:, [1, 7]]
    with pytest.raises(IndexError, match="index -7 is out of bounds for axis 0 with size 6"):
        a.vindex[[-7, 0], [0, 0]]
    with pytest.raises(IndexError, match="boolean index of length 5"):
        a.oindex[np.ones(5, bool)]
    with pytest.raises(IndexError, match="mask"):
        a.get_mask_selection(np.ones((6, 6), bool))
    with pytest.raises(IndexError, match="shape mismatch|broadcast"):
        a.vindex[[1, 2], [1, 2, 3]]
    # The server checks too: a raw request with an index out of range is OUT_OF_RANGE.
    from zarrd.v1 import zarrd_pb2 as pb
    sel = pb.Selection(mode=pb.SELECTION_MODE_ORTHOGONAL)
    sel.items.add().indices.values.extend([0, 6])
    with pytest.raises(zarrd.OutOfRangeError, match="index 6 is out of bounds for axis 0"):
        zarrd.errors.call(client.stub.GetItem, pb.GetItemRequest(store="local", path="e",
                                                                 selection=sel))
    sel = pb.Selection(mode=pb.SELECTION_MODE_MASK, mask=b"\1" * 41)
    with pytest.raises(zarrd.InvalidArgumentError, match="mask of 41 elements"):
        zarrd.errors.call(client.stub.GetItem, pb.GetItemRequest(store="local", path="e",
                                                                 selection=sel))


def test_large_results_stream(client):
    values = np.arange(600 * 4000, dtype="int32").reshape(600, 4000)  # 9.6 MB: past unary
    a = random_array(None, values, (100, 1000), client, "big")
    rows = np.arange(599, -1, -1)
    np.testing.assert_array_equal(a.oindex[rows, :], values[rows])
    np.testing.assert_array_equal(a[values % 2 == 0], values[values % 2 == 0])


@gpu
def test_advanced_selections_on_the_gpu(client):
    values = np.arange(30 * 20, dtype="int32").reshape(30, 20)
    a = random_array(None, values, (7, 6), client, "g")
    got = a.get_coordinate_selection(([1, 29, 1], [0, 19, 0]), prototype="device")
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(got), values[[1, 29, 1], [0, 19, 0]])


@gpu
def test_random_advanced_selections_on_the_gpu_equal_numpy(client):
    """The property test's orthogonal, point and mask selections as DEVICE results."""
    rng = np.random.default_rng(20261205)
    for values, _, a in random_arrays(rng, client, 30, "d"):
        shape = values.shape
        for _ in range(4):
            key = tuple(rng.integers(-n, n, int(rng.integers(1, 8))) if rng.random() < 0.5 else
                        random_slice(rng, n) for n in shape)
            want = numpy_outer(values, key)
            got = a.get_orthogonal_selection(key, prototype="device")
            np.testing.assert_array_equal(cp.asnumpy(got), want, err_msg=f"oindex {key}")
            coords = tuple(rng.integers(-n, n, (2, 3)) for n in shape)
            got = a.get_coordinate_selection(coords, prototype="device")
            np.testing.assert_array_equal(cp.asnumpy(got), values[coords], err_msg=f"{coords}")
            mask = rng.random(shape) < 0.3
            got = a.get_mask_selection(mask, prototype="device")
            np.testing.assert_array_equal(cp.asnumpy(got), values[mask], err_msg="mask")
