"""What Dask distributed needs of the Python client, against a real zarrd: arrays and groups that
pickle and reconnect (one client per process and address, the receiver's $ZARRD_ADDRESS for a
default address, a forked child on its own channel), the process-wide GPU flag seen by threads,
`chunks={}` aligned to the Zarr chunks, outer and vectorized indexing equal to numpy's without
reading the bounding box, and a dataset that closes its connection."""
import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest
import xarray as xr

import zarrd
from test_metrics import get, scrape
from test_python_client import cp, gpu
from zarrd.xarray_backend import ZarrdBackendEntrypoint

SELECTIONS = [(), 5, -1, (5, 3), (slice(None, None, -3), 2), (Ellipsis, slice(1, 30, 4)),
              (slice(40, 3, -7), Ellipsis), (slice(-20, None), slice(None, None, 2), 4)]


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


def make_values(shape, seed=0):
    return np.random.default_rng(seed).integers(-10**6, 10**6, shape).astype("int32")


def test_arrays_and_groups_pickle_and_read_like_numpy(client):
    values = make_values((50, 40, 30))
    client.create_group("local", "g")
    a = client.create_array("local", "g/a", shape=values.shape, dtype="int32", chunks=(8, 16, 8))
    a[:] = values
    for s in SELECTIONS:
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(a))[s], values[s], err_msg=str(s))
    b, c = pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(a))
    assert (b.shape, b.chunks, b.dtype) == ((50, 40, 30), (8, 16, 8), np.int32)
    assert (b.store, b.path) == ("local", "g/a")
    np.testing.assert_array_equal(b[3], values[3])
    # One client per process and address, not the one the array was opened with.
    assert b._client is c._client is zarrd.shared_client(client.address)
    assert b._client is not client
    b[0, 0, :] = np.arange(30)  # writes go through it too
    np.testing.assert_array_equal(a[0, 0], np.arange(30))

    g = pickle.loads(pickle.dumps(client.open_group("local", "g")))
    assert g.keys() == ["a"]
    np.testing.assert_array_equal(g["a"][1:3, 5], values[1:3, 5])
    host = zarrd.Array(client, a._info, prototype="host")
    assert pickle.loads(pickle.dumps(host)).prototype == "host"


def test_a_default_address_is_the_receivers_own(server, client, monkeypatch):
    """Opened through $ZARRD_ADDRESS, an array read in another process goes to that process's
    $ZARRD_ADDRESS (here the server's TCP port instead of its socket)."""
    values = make_values((20, 10))
    client.create_array("local", "d", shape=(20, 10), dtype="int32", chunks=(4, 4))[:] = values
    monkeypatch.setenv("ZARRD_ADDRESS", server.unix)
    with zarrd.connect() as default:
        blob = pickle.dumps(default.open_array("local", "d"))
    code = ("import pickle, sys; a = pickle.loads(sys.stdin.buffer.read()); "
            "sys.stdout.buffer.write(pickle.dumps((a._client.address, a[2:9:3])))")
    env = dict(os.environ, ZARRD_ADDRESS=server.tcp)
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, env=env,
                         timeout=60, check=True).stdout
    address, got = pickle.loads(out)
    assert address == server.tcp
    np.testing.assert_array_equal(got, values[2:9:3])


FORKING_PARENT = """
import multiprocessing, os, pickle, sys
import numpy as np
import zarrd

def read_in_child(array, parent_client_id, queue):
    try:
        got = array[4:12, ::3]
        queue.put((got, id(array._client) != parent_client_id, array._client.pid == os.getpid()))
    except BaseException as e:
        queue.put(repr(e))

address, store, path = sys.argv[1:4]
client = zarrd.connect(address)
a = client.open_array(store, path)
whole = a[:]  # the parent's channel is live when it forks
ctx = multiprocessing.get_context("fork")
queue = ctx.Queue()
child = ctx.Process(target=read_in_child, args=(a, id(client), queue))
child.start()
result = queue.get(timeout=60)
child.join(timeout=30)
sys.stdout.buffer.write(pickle.dumps((whole, child.exitcode, result, a[0])))
"""


def test_a_forked_child_reads_on_its_own_channel(server, client):
    """The fork happens in a fresh interpreter that made one client: a pytest process that has
    made and closed many gRPC channels and threads is no fair place for gRPC's fork support."""
    values = make_values((30, 20), seed=1)
    a = client.create_array("local", "f", shape=(30, 20), dtype="int32", chunks=(8, 8))
    a[:] = values
    out = subprocess.run([sys.executable, "-c", FORKING_PARENT, server.unix, "local", "f"],
                         capture_output=True, timeout=120, check=True).stdout
    whole, exitcode, result, first_row = pickle.loads(out)
    np.testing.assert_array_equal(whole, values)
    assert exitcode == 0 and not isinstance(result, str), result
    got, own_client, own_pid = result
    np.testing.assert_array_equal(got, values[4:12, ::3])
    assert own_client and own_pid
    np.testing.assert_array_equal(first_row, values[0])  # and the parent's channel still works


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_the_process_wide_gpu_flag_is_seen_by_threads(client):
    a = client.create_array("mem", "p", shape=(4, 4), dtype="int8")
    assert not zarrd.config.gpu_enabled()
    with zarrd.config.enable_gpu():  # the context form stays in this thread
        assert zarrd.config.gpu_enabled() and a._default_prototype() == "device"
        assert not _in_thread(zarrd.config.gpu_enabled)
    with zarrd.config.enable_gpu(globally=True):
        assert _in_thread(zarrd.config.gpu_enabled)
        assert _in_thread(a._default_prototype) == "device"
        with zarrd.config.disable_gpu():  # a context setting overrides the process default here
            assert not zarrd.config.gpu_enabled() and _in_thread(zarrd.config.gpu_enabled)
    assert not _in_thread(zarrd.config.gpu_enabled)
    with zarrd.config.set(gpu=True):
        assert _in_thread(zarrd.config.gpu_enabled)
    assert not zarrd.config.gpu_enabled()
    with pytest.raises(TypeError, match="colour"):
        zarrd.config.set(colour="red")
    check = "import zarrd; print(zarrd.config.gpu_enabled())"
    for value, expected in (("1", "True"), ("", "False")):
        out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                             env=dict(os.environ, ZARRD_GPU=value), timeout=60, check=True).stdout
        assert out.strip() == expected


def numpy_outer(values, key):
    """numpy's result of an outer selection, one axis at a time with np.take."""
    out, axis = values, 0
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (values.ndim - len(key) + 1) + key[i + 1:]
    for k in key:
        if isinstance(k, (list, np.ndarray)):
            k = np.asarray(k)
            out = np.take(out, np.flatnonzero(k) if k.dtype == bool else k.astype(np.intp), axis=axis)
            axis += 1
        else:
            out = out[(slice(None),) * axis + (k,)]
            axis += isinstance(k, slice)
    return out


OUTER = [([3, 1, 3, 49],),
         (np.array([-1, 0, 25]), [2, 3, 39], slice(2, 20, 3)),
         (slice(None, None, -4), np.arange(40) % 3 == 0, 7),
         (7, [39, 0, 38, 1], [29, 0]),
         ([], slice(None), [1]),
         (Ellipsis, np.array([5, 5, 5], dtype=np.uint8))]


def test_outer_selections_equal_numpy_and_read_runs_not_the_box(server, client):
    values = make_values((50, 40, 30), seed=3)
    a = client.create_array("local", "o", shape=values.shape, dtype="int32", chunks=(8, 8, 8))
    a[:] = values
    for key in OUTER:
        got = a.oindex[key]
        np.testing.assert_array_equal(got, numpy_outer(values, key), err_msg=str(key))
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        a.oindex[:, [40]]
    with pytest.raises(IndexError, match="1-d"):
        a.oindex[[[1, 2]]]
    # The server selects rows 49 and 0: it reads the selection, not the 50 rows between.
    url = server.log_text().split("metrics on ")[1].split()[0]
    before = get(scrape(url), "zarrd_read_bytes_total", prototype="host")
    np.testing.assert_array_equal(a.oindex[[49, 0], :, 3], values[[49, 0], :, 3])
    after = get(scrape(url), "zarrd_read_bytes_total", prototype="host")
    assert after - before == 2 * 40 * 4


def dataset(shape=(20, 30, 40)):
    rng = np.random.default_rng(4)
    return xr.Dataset(
        {"temp": (("time", "lat", "lon"), rng.standard_normal(shape), {"units": "K"})},
        coords={"time": np.arange(shape[0]), "lat": np.linspace(-50, 50, shape[1]),
                "lon": np.linspace(0, 350, shape[2])})


def test_chunks_aligned_indexing_like_numpy_and_close(server):
    pytest.importorskip("zarr", reason="Debian's zarr writes the dataset")
    pytest.importorskip("dask.array", reason="chunks={} makes Dask arrays")
    ds = dataset()
    ds.to_zarr(str(server.workdir / "data" / "x"), mode="w",
               encoding={"temp": {"chunks": (7, 16, 15)}})
    got = xr.open_dataset("zarrd://local/x", engine=ZarrdBackendEntrypoint, address=server.unix,
                          chunks={})
    assert got["temp"].chunks == ((7, 7, 6), (16, 14), (15, 15, 10))
    assert type(got["temp"].data).__module__.startswith("dask")
    np.testing.assert_array_equal(got["temp"].values, ds["temp"].values)
    np.testing.assert_allclose(got["temp"].sum("lon").values, ds["temp"].values.sum(axis=2),
                               rtol=1e-12)  # summed in another order
    got.close()

    lazy = xr.open_dataset("zarrd://local/x", engine=ZarrdBackendEntrypoint, address=server.unix)
    temp, expected = lazy["temp"], ds["temp"].values
    # Outer: a list per dimension; vectorized: lists that share a dimension ("points").
    outer = temp.isel(time=[19, 0, 0], lat=slice(3, 25, 4), lon=[39, 1]).values
    np.testing.assert_array_equal(outer, numpy_outer(expected, ([19, 0, 0], slice(3, 25, 4), [39, 1])))
    points = dict(time=xr.DataArray([0, 5, 19, 5], dims="p"), lon=xr.DataArray([1, 39, 0, 1], dims="p"))
    np.testing.assert_array_equal(temp.isel(points).values,
                                  expected[[0, 5, 19, 5], :, [1, 39, 0, 1]])
    np.testing.assert_array_equal(temp.sel(lat=lazy.lat[[2, 7]]).values, expected[:, [2, 7]])
    lazy.close()
    with pytest.raises(ValueError, match="closed"):
        temp[0, 0, 0].values  # not read before: needs the connection the dataset closed


@gpu
def test_outer_and_vectorized_selections_on_the_gpu_equal_numpy(server, client):
    values = make_values((50, 40, 30), seed=6)
    a = client.create_array("local", "og", shape=values.shape, dtype="int32", chunks=(8, 8, 8))
    a[:] = values
    for key in OUTER:
        got = a.get_orthogonal_selection(key, prototype="device")
        assert isinstance(got, cp.ndarray)
        np.testing.assert_array_equal(cp.asnumpy(got), numpy_outer(values, key), err_msg=str(key))
    # The backend array, inside the process-wide flag (in a thread, as Dask's): the in-memory
    # step of a vectorized selection runs on the CuPy result.
    from xarray.core import indexing
    from zarrd.xarray_backend import ZarrdBackendArray
    backend = ZarrdBackendArray(a, host_only=False)
    rows, cols = np.array([0, 49, 3, 3]), np.array([29, 0, 3, 7])
    with zarrd.config.enable_gpu(globally=True):
        points = _in_thread(lambda: backend[indexing.VectorizedIndexer((rows, slice(None), cols))])
        outer = _in_thread(lambda: backend[indexing.OuterIndexer((rows, slice(2, 9), cols))])
    assert isinstance(points, cp.ndarray) and isinstance(outer, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(points), values[rows, :, cols])
    np.testing.assert_array_equal(cp.asnumpy(outer), numpy_outer(values, (rows, slice(2, 9), cols)))
