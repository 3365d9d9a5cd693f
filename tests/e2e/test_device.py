"""The DEVICE prototype on a real GPU: zarrd and its clients in separate processes, results
mapped by CUDA IPC with CuPy (another implementation of the client side) and checked against
numpy. Skipped, with the reason, where there is no CuPy or no GPU."""
import json
import os
import re
import shlex
import subprocess
import sys
import time

import grpc
import numpy as np
import pytest
from conftest import Server, sel, zarrctl
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

try:
    import cupy as cp
    GPU_REASON = None if cp.cuda.runtime.getDeviceCount() > 0 else "no CUDA device"
except Exception as e:  # noqa: BLE001 - any failure means no usable GPU here
    cp = None
    GPU_REASON = f"needs CuPy and a GPU ({type(e).__name__}: {e})"

pytestmark = pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
PROBE = shlex.split(os.environ.get("ZARRD_DEVICE_PROBE", ""))

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
CODECS = {
    "raw": [BYTES],
    "zstd": [BYTES, {"name": "zstd", "configuration": {"level": 3}}],
    "blosc": [BYTES, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                         "shuffle": "shuffle", "typesize": 4}}],
    "transpose-big-gzip": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                           {"name": "bytes", "configuration": {"endian": "big"}},
                           {"name": "gzip", "configuration": {"level": 1}}],
    "crc32c": [BYTES, {"name": "crc32c"}],
    "sharded": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 6], "codecs": [BYTES, {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "start"}}],
}
SELECTIONS = [(), (5, slice(None, None, -3)), (slice(50, 3, -7), Ellipsis),
              (slice(-20, None), 17), (3, 4), (slice(10, 10),), (slice(None, None, 2), slice(1, None, 5))]


def v3(shape, chunks, codecs, dtype="float32", fill=0):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs}


def text(items):
    def one(it):
        if it is Ellipsis:
            return "..."
        if isinstance(it, slice):
            return ":".join("" if v is None else str(v) for v in (it.start, it.stop, it.step))
        return str(it)
    return ",".join(one(i) for i in items)


def checksum(values):
    """client/device_checksum.h's checksum, computed by numpy."""
    raw = np.ascontiguousarray(values).tobytes()
    raw += b"\0" * (-len(raw) % 4)
    w = np.frombuffer(raw, "<u4").astype(np.uint64)
    idx = np.arange(1, len(w) + 1, dtype=np.uint64)
    return int(w.sum(dtype=np.uint64)), int((w * idx).sum(dtype=np.uint64))


class Mapper:
    """Maps DEVICE results with CuPy, opening each (epoch, slab) once."""

    def __init__(self):
        self.slabs, self.opens = {}, 0

    def view(self, resp):
        b, d = resp.device_buffer, resp.array
        dtype = np.dtype(d.data_type)
        if b.nbytes == 0:
            return cp.empty(tuple(d.shape), dtype)
        key = (b.server_epoch, b.slab_id)
        if b.lease_id == 0:
            raise AssertionError("a region result has nothing to map")
        if key not in self.slabs:
            self.slabs[key] = cp.cuda.runtime.ipcOpenMemHandle(b.ipc_handle)
            self.opens += 1
        mem = cp.cuda.UnownedMemory(self.slabs[key] + b.offset, b.nbytes, self)
        return cp.ndarray(tuple(d.shape), dtype, cp.cuda.MemoryPointer(mem, 0))


def connect(server):
    channel = grpc.insecure_channel(server.unix, options=[
        ("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)])
    return zarrd_pb2_grpc.ZarrdStub(channel)


def pool(stub):
    return stub.ServerInfo(pb.ServerInfoRequest()).pools[0]


def create(stub, store, path, meta):
    stub.CreateNode(pb.CreateNodeRequest(store=store, path=path, kind=pb.NODE_KIND_ARRAY,
                                         metadata_json=json.dumps(meta)))


def put(stub, store, path, values, selection=()):
    stub.SetItem(pb.SetItemRequest(store=store, path=path, selection=sel(*selection),
                                   data=np.ascontiguousarray(values).tobytes()))


def get_device(stub, store, path, selection=(), **kw):
    return stub.GetItem(pb.GetItemRequest(store=store, path=path, selection=sel(*selection),
                                          prototype=pb.PROTOTYPE_DEVICE, **kw))


def code_of(call, req):
    with pytest.raises(grpc.RpcError) as e:
        call(req)
    return e.value.code(), e.value.details()


@pytest.fixture
def gpu_server(tmp_path):
    s = Server(tmp_path, {"stores": [{"name": "local", "root": "data"},
                                     {"name": "gmem", "kind": "gpu", "capacity_bytes": 256 << 20}],
                          "lease_ttl_seconds": 2})
    yield s
    s.stop()


def values_for(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 1000).astype(dtype)


@pytest.mark.parametrize("codec", sorted(CODECS) + ["v2-F-zlib"])
def test_device_equals_host_and_numpy(gpu_server, codec):
    stub = connect(gpu_server)
    if codec == "v2-F-zlib":
        values = values_for("<i2", (61, 47), 1)
        meta = {"zarr_format": 2, "shape": [61, 47], "chunks": [16, 12], "dtype": ">i2",
                "order": "F", "compressor": {"id": "zlib", "level": 1}, "fill_value": 0,
                "filters": None}
    else:
        values = values_for("<f4", (61, 47))
        meta = v3((61, 47), (16, 12) if codec != "sharded" else (16, 12), CODECS[codec])
    create(stub, "local", "a", meta)
    put(stub, "local", "a", values[:48], (slice(0, 48),))  # rows 48.. stay absent: fill value
    values[48:] = 0
    mapper = Mapper()
    for s in SELECTIONS:
        host = stub.GetItem(pb.GetItemRequest(store="local", path="a", selection=sel(*s),
                                              prototype=pb.PROTOTYPE_HOST))
        assert host.array.prototype == pb.PROTOTYPE_HOST
        dev = get_device(stub, "local", "a", s)
        assert dev.array.prototype == pb.PROTOTYPE_DEVICE and dev.device_buffer.lease_id > 0
        expected = values[s]
        got = cp.asnumpy(mapper.view(dev))
        np.testing.assert_array_equal(got, expected, err_msg=f"{codec} {s}")
        np.testing.assert_array_equal(
            np.frombuffer(host.data, values.dtype).reshape(host.array.shape), got)
        stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))
    p = pool(stub)
    assert p.leases == 0 and p.in_use_bytes == 0 and p.leased_bytes == 0
    assert mapper.opens == 1  # one slab, opened once for all the results


def test_zarrctl_prints_a_checksum_computed_on_the_gpu(gpu_server):
    stub = connect(gpu_server)
    values = values_for("<f4", (300, 200), 3)
    create(stub, "local", "z", v3((300, 200), (64, 64), CODECS["zstd"]))
    put(stub, "local", "z", values)
    for s in [(), (slice(None, None, -7), slice(3, 150, 4)), (17,)]:
        out = zarrctl(gpu_server.unix, "--prototype", "device", "get", "local:z", text(s)).stdout
        m = re.search(r"float32 (\[.*\]) (\d+) bytes checksum sum=(\d+) weighted=(\d+)", out)
        assert m, out
        assert json.loads(m.group(1)) == list(values[s].shape)
        assert (int(m.group(3)), int(m.group(4))) == checksum(values[s])


def test_two_processes_share_a_gpu_store_array(gpu_server):
    stub = connect(gpu_server)
    values = values_for("<f4", (1024, 1024), 4)
    create(stub, "gmem", "shared", v3((1024, 1024), (256, 256), [BYTES]))
    for r in range(0, 1024, 256):  # 1 MiB a request
        put(stub, "gmem", "shared", values[r:r + 256], (slice(r, r + 256),))
    probes = [subprocess.Popen([*PROBE, gpu_server.unix], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for s in [(), (slice(None, None, 3), slice(5, None)), (slice(700, 100, -9), 513)]:
            for p in probes:
                p.stdin.write(f"get gmem shared {text(s)}\n")
                p.stdin.flush()
            answers = [json.loads(p.stdout.readline()) for p in probes]
            for a in answers:
                assert "error" not in a, a
                assert (a["sum"], a["weighted"]) == checksum(values[s])
        dev = get_device(stub, "gmem", "shared", (slice(1, None, 2),))
        np.testing.assert_array_equal(cp.asnumpy(Mapper().view(dev)), values[1::2])
        host = stub.GetItem(pb.GetItemRequest(store="gmem", path="shared", prototype=pb.PROTOTYPE_HOST,
                                              selection=sel(slice(0, 4))))
        np.testing.assert_array_equal(np.frombuffer(host.data, "<f4").reshape(4, 1024), values[:4])
    finally:
        for p in probes:
            p.stdin.close()
            p.wait(timeout=30)


def test_answer_before_ready_carries_an_event_that_orders_the_result(gpu_server):
    stub = connect(gpu_server)
    values = values_for("<f4", (2048, 2048), 5)
    create(stub, "gmem", "big", v3((2048, 2048), (512, 512), [BYTES]))  # device to device
    create(stub, "local", "big", v3((2048, 2048), (512, 512), CODECS["zstd"]))  # decoded on the host
    for r in range(0, 2048, 256):
        put(stub, "gmem", "big", values[r:r + 256], (slice(r, r + 256),))
    put(stub, "local", "big", values)
    mapper, events = Mapper(), {}
    stream = cp.cuda.Stream(non_blocking=True)
    for store in ("gmem", "local"):
        for s in [(), (slice(None, None, -3), slice(7, None))]:
            dev = get_device(stub, store, "big", s, answer_before_ready=True, client_pid=os.getpid())
            b = dev.device_buffer
            assert len(b.ready_event_handle) == 64 and b.ready_event_id >= 1, (store, s)
            if b.ready_event_id not in events:
                events[b.ready_event_id] = cp.cuda.runtime.ipcOpenEventHandle(b.ready_event_handle)
            # Ordered on a stream of this process: a copy queued after the wait sees the result.
            cp.cuda.runtime.streamWaitEvent(stream.ptr, events[b.ready_event_id], 0)
            with stream:
                copy = mapper.view(dev).copy()
            stream.synchronize()
            np.testing.assert_array_equal(cp.asnumpy(copy), values[s], err_msg=f"{store} {s}")
            stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=b.lease_id))
    # Not asked: the server waits before it answers and sends no event.
    dev = get_device(stub, "gmem", "big")
    assert dev.device_buffer.ready_event_handle == b"" and dev.device_buffer.ready_event_id == 0
    np.testing.assert_array_equal(cp.asnumpy(mapper.view(dev)), values)
    stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))
    # A lease released before its result was complete keeps its memory until the copies end,
    # then the pool has nothing in use.
    for _ in range(5):
        dev = get_device(stub, "gmem", "big", answer_before_ready=True)
        stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))
    for _ in range(500):
        if pool(stub).in_use_bytes == 0:
            break
        time.sleep(0.01)
    assert pool(stub).in_use_bytes == 0 and pool(stub).leases == 0


def test_gpu_store_full_is_resource_exhausted(gpu_server):
    stub = connect(gpu_server)
    create(stub, "gmem", "huge", v3((9216, 8192), (1024, 1024), [BYTES]))  # 288 MiB of chunks
    block = np.ones((1024, 8192), "<f4")
    for r in range(0, 8 * 1024, 1024):  # 256 MiB: the store's capacity
        put(stub, "gmem", "huge", block, (slice(r, r + 1024),))
    code, msg = code_of(stub.SetItem, pb.SetItemRequest(
        store="gmem", path="huge", selection=sel(slice(8192, 9216)), data=block.tobytes()))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "GPU store is full" in msg, msg
    assert "huge/c/8/" in msg
    # What was stored before is intact, and a freed chunk makes room again.
    host = stub.GetItem(pb.GetItemRequest(store="gmem", path="huge", prototype=pb.PROTOTYPE_HOST,
                                          selection=sel(8191, slice(0, 10))))
    np.testing.assert_array_equal(np.frombuffer(host.data, "<f4"), np.ones(10, "<f4"))


LEASE_CHILD = r"""
import os, sys, time, grpc
sys.path[:0] = [p for p in os.environ["PYTHONPATH"].split(":")]
from zarrd.v1 import zarrd_pb2 as pb, zarrd_pb2_grpc
stub = zarrd_pb2_grpc.ZarrdStub(grpc.insecure_channel(sys.argv[1]))
r = stub.GetItem(pb.GetItemRequest(store="local", path="l", prototype=pb.PROTOTYPE_DEVICE,
                                   client_pid=os.getpid()))
print("leased", r.device_buffer.lease_id, flush=True)
time.sleep(600)
"""


def test_leases_released_expired_and_reclaimed(gpu_server):
    stub = connect(gpu_server)
    values = values_for("<f4", (512, 512), 5)
    create(stub, "local", "l", v3((512, 512), (128, 128), CODECS["zstd"]))
    put(stub, "local", "l", values)
    mapper = Mapper()
    # Released: the lease and its bytes are gone; a second release is NOT_FOUND.
    dev = get_device(stub, "local", "l")
    p = pool(stub)
    assert p.leases == 1 and p.leased_bytes == values.nbytes
    stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))
    assert pool(stub).leases == 0
    assert code_of(stub.ReleaseLease, pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))[0] \
        == grpc.StatusCode.NOT_FOUND
    # A live lease's memory is never reused: other reads meanwhile leave it intact.
    held = get_device(stub, "local", "l")
    assert held.device_buffer.lease_expiry_unix_ms > time.time() * 1000
    view = mapper.view(held)
    for _ in range(5):
        other = get_device(stub, "local", "l", (slice(None, None, -1),))
        assert other.device_buffer.offset != held.device_buffer.offset
        stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=other.device_buffer.lease_id))
    np.testing.assert_array_equal(cp.asnumpy(view), values)
    # Expired: the TTL is 2 s.
    deadline = time.time() + 6
    while pool(stub).leases and time.time() < deadline:
        time.sleep(0.1)
    assert pool(stub).leases == 0 and pool(stub).in_use_bytes == 0
    assert "expired" in gpu_server.log_text()
    # A killed client's leases end with it (well before the TTL would end them).
    child = subprocess.Popen([sys.executable, "-c", LEASE_CHILD, gpu_server.unix],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    assert child.stdout.readline().startswith("leased")
    assert pool(stub).leases == 1
    child.kill()
    child.wait()
    t0 = time.time()
    while pool(stub).leases and time.time() - t0 < 1.5:
        time.sleep(0.05)
    assert pool(stub).leases == 0 and pool(stub).in_use_bytes == 0
    assert f"client pid {child.pid} exited" in gpu_server.log_text()


def test_pool_exhaustion_and_quota_are_answered(tmp_path):
    server = Server(tmp_path, {"devices": [{"device": 0, "pool_bytes": 64 << 20,
                                            "slab_bytes": 32 << 20}],
                               "lease_quota_bytes": 24 << 20})
    try:
        stub = connect(server)
        create(stub, "local", "big", v3((6000, 6000), (1000, 1000), [BYTES], fill=1.5))
        code, msg = code_of(stub.GetItem, pb.GetItemRequest(store="local", path="big",
                                                            prototype=pb.PROTOTYPE_DEVICE))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, msg
        assert "capacity 67108864" in msg and "cannot allocate 144000000 bytes" in msg
        # Quota per client process: 2 × 16 MB > 24 MiB.
        part = (slice(0, 2000), slice(0, 2000))
        first = get_device(stub, "local", "big", part, client_pid=os.getpid())
        code, msg = code_of(stub.GetItem, pb.GetItemRequest(
            store="local", path="big", selection=sel(*part), prototype=pb.PROTOTYPE_DEVICE,
            client_pid=os.getpid()))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "lease quota" in msg, msg
        np.testing.assert_array_equal(cp.asnumpy(Mapper().view(first)), np.full((2000, 2000), 1.5, "<f4"))
        stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=first.device_buffer.lease_id))
        assert get_device(stub, "local", "big", part, client_pid=os.getpid()).device_buffer.lease_id
    finally:
        assert server.stop() == 0


def test_registered_device_regions_both_ways(gpu_server):
    stub = connect(gpu_server)
    values = values_for("<f4", (300, 200), 6)
    create(stub, "local", "r", v3((300, 200), (64, 64), CODECS["blosc"]))
    put(stub, "local", "r", values)
    # From Python: a cudaMalloc'd buffer, registered by its IPC handle.
    nbytes = 100 * 200 * 4
    base = cp.cuda.runtime.malloc(nbytes + 512)
    try:
        reg = stub.RegisterDeviceRegion(pb.RegisterDeviceRegionRequest(
            ipc_handle=cp.cuda.runtime.ipcGetMemHandle(base), nbytes=nbytes + 512,
            client_pid=os.getpid()))
        target = pb.DeviceRegionTarget(region_id=reg.region_id, offset=512, nbytes=nbytes)
        r = stub.GetItem(pb.GetItemRequest(store="local", path="r", selection=sel(slice(None, None, 3)),
                                           device_region=target))
        assert r.array.prototype == pb.PROTOTYPE_DEVICE and r.device_buffer.lease_id == 0
        mem = cp.cuda.UnownedMemory(base + 512, nbytes, None)
        view = cp.ndarray((100, 200), "<f4", cp.cuda.MemoryPointer(mem, 0))
        np.testing.assert_array_equal(cp.asnumpy(view), values[::3])
        view *= -1  # changed on the GPU, then written back from the region
        stub.SetItem(pb.SetItemRequest(store="local", path="r", selection=sel(slice(1, None, 3)),
                                       device_region=target))
        host = stub.GetItem(pb.GetItemRequest(store="local", path="r", selection=sel(slice(1, None, 3)),
                                              prototype=pb.PROTOTYPE_HOST))
        np.testing.assert_array_equal(np.frombuffer(host.data, "<f4").reshape(100, 200), -values[::3])
        small = pb.DeviceRegionTarget(region_id=reg.region_id, offset=1024, nbytes=nbytes)
        code, msg = code_of(stub.GetItem, pb.GetItemRequest(store="local", path="r",
                                                            selection=sel(slice(None, None, 3)),
                                                            device_region=small))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "does not fit" in msg
        stub.UnregisterDeviceRegion(pb.UnregisterDeviceRegionRequest(region_id=reg.region_id))
        code, _ = code_of(stub.GetItem, pb.GetItemRequest(store="local", path="r",
                                                          selection=sel(slice(None, None, 3)),
                                                          device_region=target))
        assert code == grpc.StatusCode.NOT_FOUND
    finally:
        cp.cuda.runtime.free(base)
    # From the C++ client: GetInto a region, SetFrom it into another selection.
    probe = subprocess.run([*PROBE, gpu_server.unix], input="region local r 10:70,::-2 200:260,100:\n",
                           capture_output=True, text=True, timeout=60)
    a = json.loads(probe.stdout)
    assert "error" not in a, a
    current = values.copy()
    current[1::3] = -values[::3]
    assert (a["sum"], a["weighted"]) == checksum(current[10:70, ::-2])
    host = stub.GetItem(pb.GetItemRequest(store="local", path="r", selection=sel(slice(200, 260), slice(100, None)),
                                          prototype=pb.PROTOTYPE_HOST))
    np.testing.assert_array_equal(np.frombuffer(host.data, "<f4").reshape(60, 100), current[10:70, ::-2])
    assert pool(stub).device_regions == 0


def test_cpp_client_opens_no_handle_after_warm_up_and_drops_them_on_restart(gpu_server):
    stub = connect(gpu_server)
    values = values_for("<f4", (400, 300), 7)
    create(stub, "local", "c", v3((400, 300), (128, 128), CODECS["zstd"]))
    create(stub, "local", "c2", v3((400, 300), (100, 100), CODECS["raw"]))
    put(stub, "local", "c", values)
    probe = subprocess.Popen([*PROBE, gpu_server.unix], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)

    def ask(line):
        probe.stdin.write(line + "\n")
        probe.stdin.flush()
        answer = json.loads(probe.stdout.readline())
        assert "error" not in answer, answer
        return answer

    try:
        first = ask("get local c")
        assert first["opens"] == 1
        for i in range(20):
            s = (slice(i, None, i + 1), slice(None, None, -1))
            a = ask(f"get local c {text(s)}")
            assert (a["sum"], a["weighted"]) == checksum(values[s])
            assert a["opens"] == 1, f"request {i} opened a handle"
        # The server answered before each result was complete; one read at a time reuses its
        # ready events (freed once complete), so few are ever opened.
        assert 1 <= a["ready_events_opened"] <= 4, a
        for s in [(), (slice(3, None, 5), slice(None, None, -2))]:  # complete in a stream's order
            a = ask(f"stream local c {text(s)}")
            assert (a["sum"], a["weighted"]) == checksum(values[s])
        # An orthogonal selection (index lists, repeated and out of order) as a DEVICE result:
        # gathered on the server's host, uploaded once.
        a = ask("get local c [7,3,3,399],::-7")
        assert (a["sum"], a["weighted"]) == checksum(values[np.ix_([7, 3, 3, 399], np.arange(300)[::-7])])
        assert pool(stub).leases == 0  # each DeviceArray released its lease when destroyed
        ask("copy local c c2")  # SetItem from the lease of a DEVICE result
        host = stub.GetItem(pb.GetItemRequest(store="local", path="c2", prototype=pb.PROTOTYPE_HOST,
                                              selection=sel(slice(0, 10))))
        np.testing.assert_array_equal(np.frombuffer(host.data, "<f4").reshape(10, 300), values[:10])
        # A restart is a new epoch: the cached mapping is dropped, one new handle is opened.
        assert gpu_server.stop() == 0
        restarted = Server(gpu_server.workdir, None)
        gpu_server.proc, gpu_server.log = restarted.proc, restarted.log
        a = ask("get local c 5")
        assert a["opens"] == 2 and (a["sum"], a["weighted"]) == checksum(values[5])
        assert a["ready_events_opened"] >= 2  # the new run's event, not the old run's
    finally:
        probe.stdin.close()
        probe.wait(timeout=30)


def test_default_prototype_device_keeps_coordinates_on_the_host(tmp_path):
    server = Server(tmp_path, {"default_prototype": "device",
                               "arrays": [{"store": "local", "path": "pinned_host", "prototype": "host"}]})
    try:
        stub = connect(server)
        lat = np.linspace(-90, 90, 181).astype("<f8")
        create(stub, "local", "lat", v3((181,), (181,), [BYTES], "float64"))
        put(stub, "local", "lat", lat)
        create(stub, "local", "t", v3((50, 60), (16, 16), CODECS["zstd"]))
        create(stub, "local", "pinned_host", v3((50, 60), (16, 16), CODECS["zstd"]))
        r = stub.GetItem(pb.GetItemRequest(store="local", path="lat"))
        assert r.array.prototype == pb.PROTOTYPE_HOST
        np.testing.assert_array_equal(np.frombuffer(r.data, "<f8"), lat)
        r = stub.GetItem(pb.GetItemRequest(store="local", path="t"))
        assert r.array.prototype == pb.PROTOTYPE_DEVICE and r.device_buffer.lease_id and not r.data
        assert stub.GetItem(pb.GetItemRequest(store="local", path="pinned_host")).array.prototype \
            == pb.PROTOTYPE_HOST
        r = stub.GetItem(pb.GetItemRequest(store="local", path="lat", prototype=pb.PROTOTYPE_DEVICE))
        np.testing.assert_array_equal(cp.asnumpy(Mapper().view(r)), lat)
        info = stub.ServerInfo(pb.ServerInfoRequest())
        assert info.devices[0].uuid.startswith("GPU-") and info.pools[0].capacity_bytes > 0
    finally:
        server.stop()


def test_device_reads_and_gpu_store_copies_from_a_remote_store(tmp_path):
    """A store behind HTTP (the object stores' transport; Python's server, on loopback) read to
    DEVICE results, and copied by `zarrctl copy` into the GPU store and read from there."""
    import functools
    import http.server
    import threading
    data = tmp_path / "data"
    data.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(data))
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    s = Server(tmp_path, {"stores": [
        {"name": "local", "root": "data"},
        {"name": "web", "kind": "http", "url": f"http://127.0.0.1:{web.server_address[1]}"},
        {"name": "gmem", "kind": "gpu", "capacity_bytes": 256 << 20}]})
    try:
        stub = connect(s)
        mapper = Mapper()
        for name in ("zstd", "sharded", "raw"):
            values = values_for("<f4", (61, 47), 7)
            create(stub, "local", name, v3((61, 47), (16, 12), CODECS[name]))
            put(stub, "local", name, values)
            zarrctl(s.unix, "copy", f"web:{name}", f"gmem:{name}")
            for store in ("web", "gmem"):
                for sl in SELECTIONS:
                    dev = get_device(stub, store, name, sl)
                    np.testing.assert_array_equal(cp.asnumpy(mapper.view(dev)), values[sl],
                                                  err_msg=f"{store} {name} {sl}")
                    stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))
    finally:
        s.stop()
        web.shutdown()


try:
    import tensorstore as ts
except ImportError:  # Debian has no tensorstore; the device machine's Python does
    ts = None


@pytest.mark.skipif(ts is None, reason="needs tensorstore (a peer writer)")
def test_gpu_decodes_transposed_and_checksummed_arrays_written_by_tensorstore(tmp_path):
    """Chains with a transpose (v3, and v2 in Fortran order) and a crc32c after the compressor,
    written by tensorstore, decode on the GPU (gpu_decode "always") to numpy's values; a
    damaged checksum is DATA_LOSS naming the chunk."""
    from test_metrics import get, scrape
    s = Server(tmp_path, {"stores": [{"name": "local", "root": "data"}], "gpu_decode": "always"})
    try:
        stub = connect(s)
        url = re.search(r"metrics on (http://\S+)", s.log_text()).group(1)
        values = values_for("<i4", (61, 47), 3)
        root = tmp_path / "data"
        v3_codecs = [{"name": "transpose", "configuration": {"order": [1, 0]}},
                     {"name": "bytes", "configuration": {"endian": "big"}},
                     {"name": "zstd", "configuration": {"level": 3}}, {"name": "crc32c"}]
        specs = {
            "v3": {"driver": "zarr3", "metadata": {
                "shape": [61, 47], "chunk_grid": {"name": "regular", "configuration": {
                    "chunk_shape": [16, 12]}}, "data_type": "int32", "codecs": v3_codecs}},
            "v2F": {"driver": "zarr", "metadata": {
                "shape": [61, 47], "chunks": [16, 12], "dtype": "<i4", "order": "F",
                "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 2}}},
        }
        for name, spec in specs.items():
            spec = dict(spec, kvstore={"driver": "file", "path": str(root / name)},
                        create=True, delete_existing=True)
            ts.open(spec).result().write(values).result()
        mapper = Mapper()
        for name in specs:
            before = get(scrape(url), "zarrd_chunks_total", op="gpu_decoded")
            for s_ in SELECTIONS:
                dev = get_device(stub, "local", name, s_)
                np.testing.assert_array_equal(cp.asnumpy(mapper.view(dev)), values[s_],
                                              err_msg=f"{name} {s_}")
                stub.ReleaseLease(pb.ReleaseLeaseRequest(lease_id=dev.device_buffer.lease_id))
            # Two of the selections touch every chunk, the others some.
            assert get(scrape(url), "zarrd_chunks_total", op="gpu_decoded") - before > 2 * 16
        chunk = root / "v3" / "c" / "1" / "2"
        damaged = bytearray(chunk.read_bytes())
        damaged[-1] ^= 1
        chunk.write_bytes(bytes(damaged))
        code, details = code_of(stub.GetItem, pb.GetItemRequest(
            store="local", path="v3", prototype=pb.PROTOTYPE_DEVICE))
        assert code == grpc.StatusCode.DATA_LOSS, details
        assert "c/1/2" in details and "crc32c" in details, details
    finally:
        s.stop()


def test_host_results_decode_on_the_gpu_as_gpu_decode_says(tmp_path):
    """With gpu_decode "always", HOST results of a zstd array decode on the GPU and come back
    with numpy's values; an array whose override is "never" decodes on the CPUs."""
    from test_metrics import get, scrape
    s = Server(tmp_path, {"stores": [{"name": "local", "root": "data"}], "gpu_decode": "always",
                          "arrays": [{"store": "local", "path": "cpu", "gpu_decode": "never"}]})
    try:
        stub = connect(s)
        url = re.search(r"metrics on (http://\S+)", s.log_text()).group(1)
        values = values_for("<f4", (61, 47), 4)
        for path in ("gpu", "cpu"):
            create(stub, "local", path, v3((61, 47), (16, 12), CODECS["zstd"]))
            put(stub, "local", path, values)
        for path in ("gpu", "cpu"):
            before = get(scrape(url), "zarrd_chunks_total", op="gpu_decoded")
            for s_ in SELECTIONS:
                host = stub.GetItem(pb.GetItemRequest(store="local", path=path, selection=sel(*s_),
                                                      prototype=pb.PROTOTYPE_HOST))
                got = np.frombuffer(host.data, values.dtype).reshape(host.array.shape)
                np.testing.assert_array_equal(got, values[s_], err_msg=f"{path} {s_}")
            decoded = get(scrape(url), "zarrd_chunks_total", op="gpu_decoded") - before
            assert (decoded > 2 * 16) if path == "gpu" else decoded == 0, (path, decoded)
    finally:
        s.stop()
