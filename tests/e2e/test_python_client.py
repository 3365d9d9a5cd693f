"""The Python client (client/python) against a real zarrd: zarr-python-like arrays, numpy
semantics checked against numpy on the same data, attributes, errors, interop with Debian's
zarr 2.x, the xarray backend, and on a GPU (CuPy present) the DEVICE cases."""
import gc
import os
import re

import shutil
import uuid

import grpc
import numpy as np
import pytest
import xarray as xr

import zarrd
from zarrd.xarray_backend import ZarrdBackendEntrypoint

try:
    import cupy as cp
    GPU = cp.cuda.runtime.getDeviceCount() > 0
    NO_GPU = "" if GPU else "no CUDA device"
except Exception as e:  # noqa: BLE001 - any failure means no usable GPU
    cp, GPU, NO_GPU = None, False, f"needs CuPy and a GPU ({type(e).__name__})"

gpu = pytest.mark.skipif(not GPU, reason=NO_GPU or "needs a GPU")

SELECTIONS = [(), 5, -1, (5, 3), (slice(None, None, -3), 2), (Ellipsis, slice(1, 30, 4)),
              (slice(40, 3, -7), Ellipsis), (slice(10, 10),), (slice(-20, None), slice(None, None, 2)),
              (slice(100, 200),)]


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


@pytest.mark.parametrize("kind", ["v3-zstd", "v3-sharded", "v3-raw-F", "v2-blosc", "v2-none"])
def test_create_write_read_like_numpy(client, kind):
    fmt = 2 if kind.startswith("v2") else 3
    kw = {"zarr_format": fmt}
    if kind == "v3-sharded":
        kw.update(chunks=(8, 8), shards=(16, 24))
    elif kind == "v3-raw-F":
        kw.update(chunks=(16, 16), compressors=None, order="F")
    elif kind == "v2-blosc":
        kw.update(chunks=(16, 16), compressors="blosc")
    elif kind == "v2-none":
        kw.update(chunks=(16, 16), compressors=None)
    else:
        kw.update(chunks=(16, 16))
    a = client.create_array("local", f"p/{kind}", shape=(50, 40), dtype="int32", fill_value=-1, **kw)
    assert a.shape == (50, 40) and a.dtype == np.int32 and a.ndim == 2 and a.zarr_format == fmt
    assert a.fill_value == -1
    values = np.random.default_rng(0).integers(-1000, 1000, (50, 40)).astype("int32")
    a[:] = values
    b = client.open_array("local", f"p/{kind}")
    for s in SELECTIONS:
        got = b[s]
        np.testing.assert_array_equal(got, values[s], err_msg=str(s))
        assert np.shape(got) == np.shape(values[s])
    assert isinstance(b[5, 3], np.int32)
    b[0:3, ::5] = 7  # broadcast, as numpy does
    values[0:3, ::5] = 7
    b[-1] = np.arange(40)
    values[-1] = np.arange(40)
    np.testing.assert_array_equal(np.asarray(b), values)


def test_large_arrays_stream_both_ways(client):
    a = client.create_array("local", "big", shape=(2048, 1500), dtype="float32", chunks=(256, 256))
    values = np.random.default_rng(1).standard_normal((2048, 1500)).astype("float32")
    a[:] = values  # 12 MB: streamed in pieces
    np.testing.assert_array_equal(a[:], values)
    np.testing.assert_array_equal(a[::-1, 7], values[::-1, 7])


def test_mid_size_reads_go_through_reused_shared_memory_like_numpy(server):
    values = np.random.default_rng(7).standard_normal((1024, 1100)).astype("float32")
    selections = [(), (slice(None, None, -1), slice(3, 900, 2)), (slice(100, 400), Ellipsis),
                  (Ellipsis, slice(None, 40))]
    for address in (server.unix, server.tcp):
        with zarrd.connect(address) as client:
            a = client.create_array("local", "mid", shape=values.shape, dtype="float32",
                                    chunks=(256, 200), overwrite=True)
            a[:] = values
            into_regions = []
            unary = client.stub.GetItem

            def get_item(request, **kw):
                into_regions.append(request.HasField("host_region"))
                return unary(request, **kw)

            client.stub.GetItem = get_item
            for _ in range(2):
                for s in selections:  # 160 KiB to 4.5 MB
                    got = a[s]
                    np.testing.assert_array_equal(got, values[s], err_msg=str(s))
                    assert got.flags.writeable and got.flags.owndata
            np.testing.assert_array_equal(a[5:7, 9], values[5:7, 9])  # 8 bytes: one message
            if address == server.tcp:  # bytes only (the largest read streams)
                assert not any(into_regions), into_regions
            else:  # one region reused, its name already gone from /dev/shm
                assert into_regions == [True] * 8 + [False], into_regions
                assert len(client.host_regions._free) == 1
                assert not [n for n in os.listdir("/dev/shm")
                            if n.startswith(f"zarrd-{server.proc.pid}-")]


def test_no_room_in_dev_shm_reads_bytes_that_time_only(client):
    values = np.random.default_rng(8).standard_normal((512, 600)).astype("float32")
    a = client.create_array("local", "room", shape=values.shape, dtype="float32", chunks=(128, 300))
    a[:] = values
    register = client.stub.RegisterHostRegion

    class NoRoom(grpc.RpcError):
        def code(self):
            return grpc.StatusCode.RESOURCE_EXHAUSTED

        def details(self):
            return "shared memory /x: /dev/shm has no room for its 1228800 bytes"

    def full(request, **kw):
        raise NoRoom()

    client.stub.RegisterHostRegion = full
    np.testing.assert_array_equal(a[:], values)  # over bytes
    assert client.host_regions.enabled and not client.host_regions._free
    client.stub.RegisterHostRegion = register
    np.testing.assert_array_equal(a[::-1], values[::-1])  # room again: shared memory
    assert len(client.host_regions._free) == 1


def test_shared_memory_reads_carry_on_across_a_restart_of_zarrd(tmp_path):
    from conftest import Server
    server = Server(tmp_path)
    client = zarrd.connect(server.unix)
    values = np.random.default_rng(8).integers(0, 1 << 30, (512, 512)).astype("int32")
    a = client.create_array("local", "restart", shape=values.shape, dtype="int32", chunks=(128, 128))
    a[:] = values
    np.testing.assert_array_equal(a[:300], values[:300])  # registers a scratch region
    stale = client.host_regions._free[0].id
    assert server.stop() == 0
    server = Server(tmp_path)  # the same socket; region ids are random, the old one is unknown
    client.stub.ServerInfo(zarrd.v1.zarrd_pb2.ServerInfoRequest(), wait_for_ready=True, timeout=20)
    np.testing.assert_array_equal(a[100:], values[100:])
    assert client.host_regions.enabled and client.host_regions._free[0].id != stale
    client.close()
    assert server.stop() == 0


def test_attributes_groups_and_dimension_names(client):
    g = client.create_group("local", "grp", attributes={"title": "t"})
    a = g.create_array("temp", shape=(4, 5), dtype="float64", dimension_names=("y", "x"),
                       attributes={"units": "K"})
    a.attrs["long_name"] = "temperature"
    reopened = client.open_group("local", "grp")
    assert reopened.attrs["title"] == "t"
    assert reopened.keys() == ["temp"]
    t = reopened["temp"]
    assert dict(t.attrs) == {"units": "K", "long_name": "temperature"}
    assert t.dimension_names == ("y", "x")
    del t.attrs["units"]
    assert dict(client.open_array("local", "grp/temp").attrs) == {"long_name": "temperature"}
    v2 = client.create_array("local", "v2", shape=(3,), dtype="u1", zarr_format=2, dimension_names=("x",))
    assert v2.dimension_names == ("x",) and "_ARRAY_DIMENSIONS" in v2.attrs


def test_errors_are_python_exceptions_with_the_servers_message(client):
    with pytest.raises(zarrd.NotFoundError) as e:
        client.open_array("local", "nope")
    assert isinstance(e.value, KeyError) and "nope" in str(e.value)
    client.create_array("local", "e", shape=(10,), dtype="int8")
    with pytest.raises(zarrd.AlreadyExistsError):
        client.create_array("local", "e", shape=(10,), dtype="int8")
    a = client.open_array("local", "e")
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 10"):
        a[10]
    np.testing.assert_array_equal(a[[1, 2, -1]], np.zeros(3, "int8"))  # numpy's fancy indexing
    with pytest.raises(IndexError, match="integer or boolean"):
        a[[1.5]]
    with pytest.raises(ValueError, match="step cannot be zero"):
        a[::0]
    with pytest.raises(zarrd.PermissionDeniedError, match="read-only"):
        client.open_array("ro", "e")[0] = 1
    with pytest.raises(zarrd.InvalidArgumentError, match="data_type"):
        client.create_array("local", "bad", shape=(3,), dtype="V8")
    with pytest.raises(ValueError, match="prototype"):
        a.get(prototype="elsewhere")
    if not GPU:  # this zarrd serves no GPU: the server says so
        with pytest.raises(zarrd.FailedPreconditionError, match="no CUDA device"):
            a.get(prototype="device")


def test_arrays_open_in_zarr_python_both_ways(client, server):
    zarr = pytest.importorskip("zarr")
    values = np.arange(30 * 20, dtype="<f8").reshape(30, 20) / 7
    a = client.create_array("local", "interop/by_zarrd", shape=(30, 20), dtype="float64",
                            chunks=(8, 8), zarr_format=2, compressors="zlib")
    a[:] = values
    a.attrs["source"] = "zarrd"
    z = zarr.open_array(str(server.workdir / "data" / "interop" / "by_zarrd"), mode="r")
    np.testing.assert_array_equal(z[:], values)
    assert z.attrs["source"] == "zarrd"
    w = zarr.open_array(str(server.workdir / "data" / "interop" / "by_zarr"), mode="w",
                        shape=(25, 9), chunks=(4, 4), dtype="<i2", fill_value=3)
    w[2:20] = np.arange(18 * 9, dtype="<i2").reshape(18, 9)
    got = client.open_array("local", "interop/by_zarr")
    np.testing.assert_array_equal(got[:], w[:])


@pytest.mark.parametrize("dtype", ["datetime64[ns]", "datetime64[10ms]", "timedelta64[s]",
                                   ">m8[D]"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_datetime_and_timedelta_arrays_come_back_in_their_unit(client, server, dtype, zarr_format):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(5)
    values = rng.integers(-10**12, 10**12, (9, 7)).astype("<i8").view(dt.newbyteorder("<"))
    values[::4, 2] = np.array("NaT", dt)
    path = f"times/{zarr_format}/{dtype}"
    a = client.create_array("local", path, shape=values.shape, dtype=dt, chunks=(4, 3),
                            fill_value=np.array("NaT", dt), zarr_format=zarr_format)
    assert a.dtype == dt.newbyteorder("<") and np.isnat(a.fill_value)
    assert a[0, 0].dtype == dt.newbyteorder("<") and np.isnat(a[0, 0])  # fill before writes
    a[:] = values
    b = client.open_array("local", path)
    for sel in SELECTIONS[:6]:
        got = b[sel]
        assert np.asarray(got).dtype == dt.newbyteorder("<")
        np.testing.assert_array_equal(got, values[sel])
    if zarr_format == 3:
        doc = b.metadata["data_type"]
        unit, count = np.datetime_data(dt)
        assert doc == {"name": "numpy.datetime64" if dt.kind == "M" else "numpy.timedelta64",
                       "configuration": {"unit": unit, "scale_factor": count}}
    else:
        zarr = pytest.importorskip("zarr")
        z = zarr.open_array(str(server.workdir / "data" / path), mode="r")
        assert z.dtype == dt.newbyteorder("<")
        np.testing.assert_array_equal(z[...], values)


@gpu
def test_device_reads_of_datetimes_are_their_int64_counts(client):
    values = np.arange("2020-01-01", "2020-03-01", dtype="M8[h]").reshape(-1, 8)
    a = client.create_array("local", "dt_gpu", shape=values.shape, dtype=values.dtype,
                            chunks=(16, 8))
    a[:] = values
    got = a.get((slice(None, None, 3), slice(1, 7)), prototype="device")
    assert isinstance(got, cp.ndarray) and got.dtype == np.int64
    np.testing.assert_array_equal(cp.asnumpy(got), values[::3, 1:7].view("<i8"))


@gpu
def test_device_results_of_orthogonal_point_and_mask_selections_match_numpy(client):
    values = np.arange(40 * 30, dtype="<f4").reshape(40, 30) * 0.5
    a = client.create_array("local", "adv_gpu", shape=values.shape, dtype=values.dtype,
                            chunks=(7, 8))
    a[:] = values
    rows, cols = [9, 0, 0, 39, 17], np.arange(30)[::-4]
    got = a.get_orthogonal_selection((rows, cols), prototype="device")
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(got), values[np.ix_(rows, cols)])
    points = ([3, 39, 3, 20], [29, 0, 1, 15])
    got = a.get_coordinate_selection(points, prototype="device")
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(got), values[points])
    grid = (np.array([[0, 5], [39, 5]]), np.array([[1, 2], [3, 29]]))  # a 2 x 2 of points
    got = a.get_coordinate_selection(grid, prototype="device")
    np.testing.assert_array_equal(cp.asnumpy(got), values[grid])
    mask = (values % 7) < 1
    got = a.get_mask_selection(mask, prototype="device")
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(got), values[mask])


def dataset():
    rng = np.random.default_rng(2)
    return xr.Dataset(
        {"temp": (("time", "lat", "lon"), rng.standard_normal((4, 6, 8)).astype("float32"),
                  {"units": "K"}),
         "mask": (("lat", "lon"), rng.integers(0, 2, (6, 8)).astype("int8"))},
        coords={"time": np.array(["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"],
                                 dtype="datetime64[ns]"),
                "lat": np.linspace(-50, 50, 6), "lon": np.linspace(0, 350, 8)},
        attrs={"title": "test"})


def write_dataset(ds, path):
    """Debian's xarray writes it; where zarr is missing (the GPU machine), the copy it wrote at
    bundle time ($ZARRD_XARRAY_FIXTURE, scripts/device-suite) stands in."""
    try:
        import zarr  # noqa: F401
        ds.to_zarr(str(path), mode="w")
    except ImportError:
        shutil.copytree(os.environ["ZARRD_XARRAY_FIXTURE"], path)


def test_xarray_backend_opens_a_dataset_written_by_xarray(server):
    ds = dataset()
    write_dataset(ds, server.workdir / "data" / "ds")
    got = xr.open_dataset("zarrd://local/ds", engine=ZarrdBackendEntrypoint, address=server.unix)
    assert got.attrs["title"] == "test" and got["temp"].attrs["units"] == "K"
    assert isinstance(got["lat"].values, np.ndarray)
    xr.testing.assert_equal(got, ds)
    try:  # and what xarray's own zarr backend makes of the same files
        import zarr  # noqa: F401
        xr.testing.assert_identical(got.load(), xr.open_zarr(str(server.workdir / "data" / "ds")).load())
    except ImportError:
        pass
    assert got.sel(lat=got.lat[2])["temp"].shape == (4, 8)  # coordinates index


def test_gpu_uuids_keep_their_zero_bytes():
    raw = bytes.fromhex("6f50f0548957e45cf4a7193754a300df")  # a UUID seen on an H200, 0x00 in it
    assert zarrd.device._uuid_string(raw) == "GPU-" + str(uuid.UUID(bytes=raw))


@gpu
def test_device_uuids_from_the_driver_name_the_servers_gpus(client):
    info = client.stub.ServerInfo(zarrd.client.pb.ServerInfoRequest())
    here = {}
    for i in range(cp.cuda.runtime.getDeviceCount()):
        raw = zarrd.device._device_uuid(i)
        assert len(raw) == 16
        # CuPy's copy of the UUID is the same bytes, up to the first zero byte.
        assert raw.startswith(bytes(cp.cuda.runtime.getDeviceProperties(i)["uuid"]))
        here[zarrd.device._uuid_string(raw)] = i
    assert info.devices and {d.uuid for d in info.devices} <= set(here)


@gpu
def test_gpu_reads_writes_leases_and_handle_cache(client):
    values = np.random.default_rng(3).standard_normal((300, 200)).astype("float32")
    a = client.create_array("local", "g", shape=(300, 200), dtype="float32", chunks=(64, 64))
    a[:] = values
    lat = client.create_array("local", "lat", shape=(300,), dtype="float64")
    lat[:] = np.linspace(0, 1, 300)
    with zarrd.config.enable_gpu():
        for s in SELECTIONS:
            got = a[s]
            assert isinstance(got, cp.ndarray), s
            np.testing.assert_array_equal(cp.asnumpy(got), values[s])
            np.testing.assert_array_equal(cp.asnumpy(got), a.get(s, prototype="host"))
        del got  # its lease ends with it
        assert isinstance(lat[:], np.ndarray)  # coordinates stay on the host
    assert isinstance(a[:], np.ndarray)
    session = client.device_session()
    opens = session.handle_opens
    for _ in range(20):
        a.get((slice(None, None, 2),), prototype="device")
    assert session.handle_opens == opens == 1
    # Each read was answered before its result was complete; its ready events were reused.
    assert 1 <= session.ready_events_opened <= 4
    # Complete in a stream's order: work queued on the stream after get sees the result.
    stream = cp.cuda.Stream(non_blocking=True)
    for s in SELECTIONS:
        got = a.get(s, prototype="device", stream=stream)
        with stream:
            copy = got.copy()
        stream.synchronize()
        np.testing.assert_array_equal(cp.asnumpy(copy), values[s])
    with pytest.raises(ValueError, match="device results only"):
        a.get(prototype="host", stream=stream)
    del got, copy  # their leases end with them
    gc.collect()
    info = lambda: client.stub.ServerInfo(zarrd.client.pb.ServerInfoRequest()).pools[0]  # noqa: E731
    assert info().leases == 0
    held = a.get(prototype="device")
    view = held[::2]
    assert info().leases == 1
    del held
    gc.collect()
    assert info().leases == 1  # a view keeps the lease
    del view
    gc.collect()
    assert info().leases == 0
    # CuPy input: written from GPU memory through a registered region.
    new = cp.asarray(values * 2)
    a[::-1] = new[::-1]
    np.testing.assert_array_equal(a.get(prototype="host"), values * 2)
    a[5] = cp.float32(1.5)
    assert (a.get(5, prototype="host") == 1.5).all()
    assert info().device_regions == 0
    torch = pytest.importorskip("torch")
    # PyTorch: a DEVICE result through DLPack, without a copy, and a CUDA tensor as input.
    result = a.get((slice(0, 4),), prototype="device")
    t = torch.from_dlpack(result)
    assert t.is_cuda and t.data_ptr() == result.data.ptr
    np.testing.assert_array_equal(t.cpu().numpy(), a.get((slice(0, 4),), prototype="host"))
    a[10:14] = torch.full((4, 200), 3.0, device="cuda")
    assert (a.get((slice(10, 14),), prototype="host") == 3.0).all()


@gpu
def test_xarray_data_on_the_gpu_coordinates_on_the_host(server):
    ds = dataset()
    write_dataset(ds, server.workdir / "data" / "gds")
    with zarrd.config.enable_gpu():
        got = xr.open_dataset("zarrd://local/gds", engine=ZarrdBackendEntrypoint,
                              address=server.unix).load()
        assert isinstance(got["temp"].data, cp.ndarray) and isinstance(got["mask"].data, cp.ndarray)
        assert isinstance(got["lat"].data, np.ndarray) and isinstance(got["time"].data, np.ndarray)
        np.testing.assert_array_equal(cp.asnumpy(got["temp"].data), ds["temp"].values)
        np.testing.assert_array_equal(got["time"].values, ds["time"].values)


def _sockets():
    """Sockets this process holds open."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:  # closed since the listing
            pass
    return count


def test_large_reads_through_shared_memory_bands_decode_each_chunk_once(tmp_path, monkeypatch):
    from conftest import Server
    from test_metrics import get, scrape
    monkeypatch.setattr("zarrd.host_region.MAX_BYTES", 256 << 10)
    monkeypatch.setattr("zarrd.host_region.BAND_BYTES", 96 << 10)
    server = Server(tmp_path, {"max_unary_result_bytes": 4096})
    url = re.search(r"metrics on (http://\S+)", server.log_text()).group(1)
    client = zarrd.connect(server.unix)
    a = client.create_array("local", "shm_bands", shape=(700, 3, 1000), dtype="float32",
                            chunks=(16, 3, 250))
    values = np.random.default_rng(6).standard_normal((700, 3, 1000)).astype("float32")
    a[:] = values
    sockets_before = _sockets()
    before = scrape(url)
    np.testing.assert_array_equal(a[:], values)
    # 44 x 1 x 4 chunks, each decoded once: the bands (a row of chunks each) meet on chunk edges.
    assert get(scrape(url), "zarrd_chunks_total", op="decoded") - \
        get(before, "zarrd_chunks_total", op="decoded") == 44 * 4
    for streams in (4, 1):
        client.read_streams = streams
        for s in [(slice(None, None, -1),), (slice(650, 2, -3), Ellipsis), (Ellipsis, 500),
                  (2, slice(None), slice(None, None, 2)), (slice(5, None, 3), 1), (slice(17, 600),)]:
            np.testing.assert_array_equal(a.get(s), values[s], err_msg=f"{streams} streams, {s}")
    assert _sockets() == sockets_before  # nothing streamed: no band connections
    client.close()
    assert server.stop() == 0


def test_large_reads_split_into_parallel_bands_like_numpy(tmp_path, monkeypatch):
    from conftest import Server
    monkeypatch.setattr("zarrd.stream.MIN_BAND_BYTES", 1 << 16)  # bands of this small array
    server = Server(tmp_path, {"max_unary_result_bytes": 4096})  # every read below streams
    client = zarrd.connect(server.unix)
    client.host_regions.enabled = False  # else reads up to 64 MiB go through shared memory
    a = client.create_array("local", "bands", shape=(700, 3, 1000), dtype="float32", chunks=(64, 3, 250))
    values = np.random.default_rng(5).standard_normal((700, 3, 1000)).astype("float32")
    a[:] = values
    sockets_before = _sockets()
    for streams in (4, 1, 3):
        client.read_streams = streams
        for s in [(), (slice(None, None, -1),), (slice(650, 2, -3), Ellipsis), (Ellipsis, 500),
                  (2, slice(None), slice(None, None, 2)), (slice(-690, None, 7), 1)]:
            np.testing.assert_array_equal(a.get(s), values[s], err_msg=f"{streams} streams, {s}")
    # Each band past the first streamed on a connection of its own: 3 more sockets here.
    assert _sockets() - sockets_before >= 3
    client.close()
    assert server.stop() == 0


def test_streamed_reads_with_a_negative_step_match_numpy_and_decode_each_chunk_once(
        tmp_path, monkeypatch):
    from conftest import Server
    from test_metrics import get, scrape
    monkeypatch.setattr("zarrd.stream.MIN_BAND_BYTES", 1 << 16)
    server = Server(tmp_path, {"max_unary_result_bytes": 4096})  # every read below streams
    url = re.search(r"metrics on (http://\S+)", server.log_text()).group(1)
    client = zarrd.connect(server.unix)
    client.host_regions.enabled = False
    a = client.create_array("local", "backwards", shape=(700, 3, 1000), dtype="float32",
                            chunks=(64, 3, 250))
    values = np.random.default_rng(7).standard_normal((700, 3, 1000)).astype("float32")
    a[:] = values
    for streams in (4, 3):
        client.read_streams = streams
        for s in [(slice(None, None, -1),), (slice(650, 2, -3), Ellipsis),
                  (slice(699, 100, -64), 1), (slice(-1, 5, -7), slice(None), slice(900, 10, -2))]:
            before = scrape(url)
            np.testing.assert_array_equal(a.get(s), values[s], err_msg=f"{streams} streams, {s}")
            chunk_rows = len(set((np.arange(700)[s[0]] // 64).tolist()))
            chunk_cols = len(set((np.arange(1000)[s[2]] // 250).tolist())) if len(s) > 2 else 4
            # Client bands and the server's bands in each meet on chunk edges: no chunk twice.
            assert get(scrape(url), "zarrd_chunks_total", op="decoded") - \
                get(before, "zarrd_chunks_total", op="decoded") == chunk_rows * chunk_cols, s
    client.close()
    assert server.stop() == 0
