"""The contract from another language: Debian's python3-grpcio with stubs from Debian's protoc,
no C++ client involved."""
import json
import mmap
import os
import subprocess
import sys
import time

import grpc
import numpy as np
import pytest
from conftest import sel
from zarrd.v1 import zarrd_pb2 as pb

V3 = {"zarr_format": 3, "node_type": "array", "shape": [300, 200], "data_type": "float32",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64, 64]}},
      "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "zstd", "configuration": {"level": 1}}]}


def create(stub, store, path, meta=V3):
    return stub.CreateNode(pb.CreateNodeRequest(store=store, path=path, kind=pb.NODE_KIND_ARRAY,
                                                metadata_json=json.dumps(meta)))


def test_roundtrip_selections_and_stream(stub):
    info = stub.ServerInfo(pb.ServerInfoRequest())
    assert info.epoch != 0 and {s.name for s in info.stores} == {"local", "mem", "ro"}
    node = create(stub, "local", "g/a")
    assert list(node.shape) == [300, 200] and node.data_type == "float32"
    values = np.random.default_rng(1).standard_normal((300, 200)).astype("<f4")
    stub.SetItem(pb.SetItemRequest(store="local", path="g/a", data=values.tobytes()))
    for s, np_sel in [((), ...), ((5, slice(None, None, -3)), (5, slice(None, None, -3))),
                      ((slice(290, 3, -7), Ellipsis), (slice(290, 3, -7), ...)),
                      ((slice(-50, None), 17), (slice(-50, None), 17))]:
        r = stub.GetItem(pb.GetItemRequest(store="local", path="g/a", selection=sel(*s)))
        got = np.frombuffer(r.data, "<f4").reshape(r.array.shape)
        np.testing.assert_array_equal(got, values[np_sel])
    # The streamed form returns the same bytes, piece by piece with offsets.
    buf = bytearray(values.nbytes)
    first = None
    for msg in stub.GetItemStream(pb.GetItemRequest(store="local", path="g/a")):
        first = first or msg
        buf[msg.offset:msg.offset + len(msg.data)] = msg.data
    assert first.array.nbytes == values.nbytes
    assert bytes(buf) == values.tobytes()


def test_errors_have_the_design_codes(stub):
    def code_of(call, req):
        with pytest.raises(grpc.RpcError) as e:
            call(req)
        return e.value.code(), e.value.details()

    create(stub, "local", "a")
    assert code_of(stub.GetNode, pb.NodeRequest(store="local", path="nope"))[0] == grpc.StatusCode.NOT_FOUND
    assert code_of(stub.GetNode, pb.NodeRequest(store="nostore", path="a"))[0] == grpc.StatusCode.NOT_FOUND
    code, msg = code_of(stub.GetItem, pb.GetItemRequest(store="local", path="a", selection=sel(300)))
    assert code == grpc.StatusCode.OUT_OF_RANGE and "out of bounds for axis 0" in msg
    assert code_of(stub.GetItem, pb.GetItemRequest(store="local", path="a",
                                                   selection=sel(slice(None, None, 0))))[0] == grpc.StatusCode.INVALID_ARGUMENT
    code, msg = code_of(stub.SetItem, pb.SetItemRequest(store="local", path="a", data=b"123"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "input holds 3 bytes" in msg
    assert code_of(stub.CreateNode, pb.CreateNodeRequest(store="local", path="a", kind=pb.NODE_KIND_ARRAY,
                                                         metadata_json=json.dumps(V3)))[0] == grpc.StatusCode.ALREADY_EXISTS
    bad = dict(V3, data_type="int128")
    code, msg = code_of(stub.CreateNode, pb.CreateNodeRequest(store="local", path="b", kind=pb.NODE_KIND_ARRAY,
                                                              metadata_json=json.dumps(bad)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "data_type" in msg
    assert code_of(stub.CreateNode, pb.CreateNodeRequest(store="local", path="b", kind=pb.NODE_KIND_ARRAY,
                                                         metadata_json="{not json"))[0] == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(stub.CreateNode, pb.CreateNodeRequest(store="local", path="../x", kind=pb.NODE_KIND_ARRAY,
                                                         metadata_json=json.dumps(V3)))[0] == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(stub.SetItem, pb.SetItemRequest(store="ro", path="a", data=b""))[0] == grpc.StatusCode.PERMISSION_DENIED
    code, msg = code_of(stub.GetItem, pb.GetItemRequest(store="local", path="a", prototype=pb.PROTOTYPE_DEVICE))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "no CUDA device" in msg
    # Nothing was written by the refused requests.
    assert [n.name for n in stub.ListNodes(pb.NodeRequest(store="local")).nodes] == ["a"]


def test_health_and_reflection_are_served(stub, server):
    channel = grpc.insecure_channel(server.unix)
    check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                request_serializer=lambda b: b, response_deserializer=lambda b: b)
    assert check(b"") == b"\x08\x01"  # HealthCheckResponse{status: SERVING}
    # ServerReflectionRequest{list_services: ""} over the v1alpha reflection stream.
    info = channel.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                                 request_serializer=lambda b: b, response_deserializer=lambda b: b)
    reply = next(info(iter([b"\x3a\x00"])))
    assert b"zarrd.v1.Zarrd" in reply


def register(stub, nbytes, pid=None):
    """A region zarrd creates, mapped here as a client does it (the name unlinked at once)."""
    r = stub.RegisterHostRegion(pb.RegisterHostRegionRequest(nbytes=nbytes,
                                                             client_pid=pid or os.getpid()))
    assert r.shm_name.startswith("/zarrd-") and r.nbytes == nbytes
    fd = os.open(f"/dev/shm{r.shm_name}", os.O_RDWR)
    assert os.fstat(fd).st_mode & 0o777 == 0o600
    os.unlink(f"/dev/shm{r.shm_name}")
    try:
        return r, mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


def test_shared_memory_transport(stub):
    create(stub, "local", "s")
    values = np.arange(300 * 200, dtype="<f4").reshape(300, 200)
    stub.SetItem(pb.SetItemRequest(store="local", path="s", data=values.tobytes()))
    region, mem = register(stub, values.nbytes + 4096)
    try:
        want = values[7:250:3, ::-2]
        stub.GetItem(pb.GetItemRequest(store="local", path="s", selection=sel(slice(7, 250, 3), slice(None, None, -2)),
                                       host_region=pb.HostRegionTarget(region_id=region.region_id, offset=4096,
                                                                       nbytes=want.nbytes)))
        got = np.frombuffer(mem, "<f4", count=want.size, offset=4096).reshape(want.shape).copy()
        np.testing.assert_array_equal(got, want)
        # Equal to the bytes transport.
        r = stub.GetItem(pb.GetItemRequest(store="local", path="s", selection=sel(slice(7, 250, 3), slice(None, None, -2))))
        assert r.data == got.tobytes()
        # SetItem from the region.
        mem[0:800] = (np.ones(200, "<f4") * -5).tobytes()
        stub.SetItem(pb.SetItemRequest(store="local", path="s", selection=sel(0),
                                       host_region=pb.HostRegionTarget(region_id=region.region_id, offset=0, nbytes=800)))
        row = stub.GetItem(pb.GetItemRequest(store="local", path="s", selection=sel(0)))
        assert np.all(np.frombuffer(row.data, "<f4") == -5)
        # Too small and unregistered regions are refused.
        with pytest.raises(grpc.RpcError) as e:
            stub.GetItem(pb.GetItemRequest(store="local", path="s", host_region=pb.HostRegionTarget(
                region_id=region.region_id, offset=8192, nbytes=values.nbytes)))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "too small" in e.value.details()
        stub.UnregisterHostRegion(pb.UnregisterHostRegionRequest(region_id=region.region_id))
        with pytest.raises(grpc.RpcError) as e:
            stub.GetItem(pb.GetItemRequest(store="local", path="s", host_region=pb.HostRegionTarget(
                region_id=region.region_id, offset=0, nbytes=values.nbytes)))
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        assert e.value.details().startswith("host region"), e.value.details()  # the contract (zarrd.proto)
    finally:
        mem.close()


def test_another_process_shared_memory_is_never_mapped_nor_unlinked(stub):
    """Objects named by the client are refused: zarrd neither reads, writes nor unlinks them,
    also when the request names a dead pid."""
    create(stub, "local", "f")
    values = np.arange(300 * 200, dtype="<f4").reshape(300, 200)
    stub.SetItem(pb.SetItemRequest(store="local", path="f", data=values.tobytes()))
    name = f"/zarrd-foreign-{os.getpid()}"
    fd = os.open(f"/dev/shm{name}", os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, 1 << 20)
        os.pwrite(fd, b"secret", 0)
        dead = subprocess.Popen(["true"])
        dead.wait()
        for pid in (0, os.getpid(), dead.pid):
            with pytest.raises(grpc.RpcError) as e:
                stub.RegisterHostRegion(pb.RegisterHostRegionRequest(shm_name=name, nbytes=1 << 20,
                                                                     client_pid=pid))
            assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED, e.value.details()
        time.sleep(0.6)  # two reaper ticks
        assert os.path.exists(f"/dev/shm{name}") and os.pread(fd, 6, 0) == b"secret"
        # client_pid 0, or no live process, is no client.
        for pid in (0, dead.pid):
            with pytest.raises(grpc.RpcError) as e:
                stub.RegisterHostRegion(pb.RegisterHostRegionRequest(nbytes=4096, client_pid=pid))
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value.details()
    finally:
        os.close(fd)
        os.unlink(f"/dev/shm{name}")


def test_host_region_quota_is_per_client(stub, server):
    """One client's regions are bounded; another client registers all the same."""
    held = []
    with pytest.raises(grpc.RpcError) as e:
        for _ in range(65):
            held.append(stub.RegisterHostRegion(pb.RegisterHostRegionRequest(
                nbytes=4096, client_pid=os.getpid())).region_id)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "quota" in e.value.details()
    assert len(held) == 64
    with pytest.raises(grpc.RpcError) as e:
        stub.RegisterHostRegion(pb.RegisterHostRegionRequest(nbytes=5 << 30,
                                                             client_pid=server.proc.pid))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "quota" in e.value.details()
    other = subprocess.Popen(["sleep", "30"])
    try:
        r = stub.RegisterHostRegion(pb.RegisterHostRegionRequest(nbytes=4096, client_pid=other.pid))
        assert r.region_id
    finally:
        other.kill()
        other.wait()
    stub.UnregisterHostRegion(pb.UnregisterHostRegionRequest(region_id=held.pop()))
    held.append(stub.RegisterHostRegion(pb.RegisterHostRegionRequest(
        nbytes=4096, client_pid=os.getpid())).region_id)  # room again
    for region_id in held:
        stub.UnregisterHostRegion(pb.UnregisterHostRegionRequest(region_id=region_id))


def test_shared_memory_that_shrinks_fails_the_request_not_zarrd(stub, server):
    create(stub, "local", "k")
    values = np.arange(300 * 200, dtype="<f4").reshape(300, 200)
    stub.SetItem(pb.SetItemRequest(store="local", path="k", data=values.tobytes()))
    # More than /dev/shm can hold (or than a client's quota): refused at registration.
    room = os.statvfs("/dev/shm")
    with pytest.raises(grpc.RpcError) as e:
        stub.RegisterHostRegion(pb.RegisterHostRegionRequest(
            nbytes=room.f_bavail * room.f_frsize + (1 << 30), client_pid=os.getpid()))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.value.details()
    assert "no room" in e.value.details() or "quota" in e.value.details()
    # Shrunk under a registered region (the client truncates the object it opened): the read and
    # the write fail, zarrd serves on.
    for what in ("read", "write"):
        r = stub.RegisterHostRegion(pb.RegisterHostRegionRequest(nbytes=values.nbytes,
                                                                 client_pid=os.getpid()))
        fd = os.open(f"/dev/shm{r.shm_name}", os.O_RDWR)
        os.unlink(f"/dev/shm{r.shm_name}")
        try:
            os.pwrite(fd, np.full(values.size, 3, "<f4").tobytes(), 0)
            target = pb.HostRegionTarget(region_id=r.region_id, offset=0, nbytes=values.nbytes)
            os.ftruncate(fd, 4096)
            with pytest.raises(grpc.RpcError) as e:
                if what == "read":
                    stub.GetItem(pb.GetItemRequest(store="local", path="k", host_region=target))
                else:
                    stub.SetItem(pb.SetItemRequest(store="local", path="k", host_region=target))
            assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION, e.value.details()
            assert "lost its pages" in e.value.details() and r.shm_name in e.value.details()
            with pytest.raises(grpc.RpcError) as e:  # dropped
                stub.GetItem(pb.GetItemRequest(store="local", path="k", host_region=target))
            assert e.value.code() == grpc.StatusCode.NOT_FOUND
        finally:
            os.close(fd)
        got = stub.GetItem(pb.GetItemRequest(store="local", path="k"))
        assert got.data == values.tobytes()  # nothing written from the lost region
    assert server.proc.poll() is None


def test_a_client_that_dies_leaves_no_region_behind(stub, server, tmp_path):
    create(stub, "local", "d")
    script = f"""
import os, sys, time, grpc
sys.path[:0] = {sys.path!r}
from zarrd.v1 import zarrd_pb2 as pb, zarrd_pb2_grpc
stub = zarrd_pb2_grpc.ZarrdStub(grpc.insecure_channel({server.unix!r}))
r = stub.RegisterHostRegion(pb.RegisterHostRegionRequest(nbytes=1 << 20, client_pid=os.getpid()))
print(r.region_id, r.shm_name, flush=True)
time.sleep(60)
"""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    region_id, name = child.stdout.readline().split()
    assert region_id.startswith("host-")
    target = pb.HostRegionTarget(region_id=region_id, offset=0, nbytes=300 * 200 * 4)
    stub.GetItem(pb.GetItemRequest(store="local", path="d", host_region=target))  # usable
    child.kill()  # before it unlinked the name: zarrd unlinks the object it made
    child.wait()
    deadline = time.time() + 10
    while os.path.exists(f"/dev/shm{name}") and time.time() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/dev/shm{name}"), "the dead client's shm object is still there"
    with pytest.raises(grpc.RpcError) as e:
        stub.GetItem(pb.GetItemRequest(store="local", path="d", host_region=target))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert "owner pid" in server.log_text()


def test_stream_bytes_diagnostic_sends_what_it_says(tmp_path):
    """The bare-transport diagnostic: offsets contiguous, zeros by default; with `distinct`,
    consecutive parts of one buffer whose 4 KiB pages hold their page number (mod 256)."""
    from conftest import Server
    from zarrd.v1 import zarrd_pb2_grpc
    server = Server(tmp_path, {"max_result_bytes": 8 << 20, "enable_stream_bytes": True})
    try:
        with grpc.insecure_channel(server.unix, options=[
                ("grpc.max_receive_message_length", -1)]) as channel:
            stub = zarrd_pb2_grpc.ZarrdStub(channel)
            nbytes = (3 << 20) + 5
            for distinct in (False, True):
                got = bytearray()
                for msg in stub.StreamBytes(pb.StreamBytesRequest(
                        nbytes=nbytes, piece_bytes=1 << 20, distinct=distinct)):
                    assert msg.offset == len(got)
                    assert len(msg.data) == min(1 << 20, nbytes - msg.offset)
                    got += msg.data
                values = np.frombuffer(bytes(got), np.uint8)
                expected = ((np.arange(nbytes) >> 12) % 256).astype(np.uint8) if distinct \
                    else np.zeros(nbytes, np.uint8)
                np.testing.assert_array_equal(values, expected)
            with pytest.raises(grpc.RpcError) as e:
                list(stub.StreamBytes(pb.StreamBytesRequest(nbytes=9 << 20, distinct=True)))
            assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        assert server.stop() == 0


def test_short_requests_run_on_grpcs_thread_and_long_ones_on_workers(tmp_path):
    """Short work (metadata, a read decoding at most 4 MiB) runs on gRPC's thread,
    `inline_requests` at a time; a read decoding more, and writes, go to a worker; concurrent
    short reads past the limit still read the right values. `inline_requests: 0` turns it off."""
    import re
    import threading
    from conftest import Server
    from zarrd.v1 import zarrd_pb2_grpc
    meta = dict(V3, shape=[2048, 2048],
                chunk_grid={"name": "regular", "configuration": {"chunk_shape": [256, 256]}})
    values = np.random.default_rng(7).standard_normal((2048, 2048)).astype("<f4")

    def serve(inline_requests, work):
        (tmp_path / str(inline_requests)).mkdir()
        server = Server(tmp_path / str(inline_requests), {"inline_requests": inline_requests})
        try:
            with grpc.insecure_channel(server.unix, options=[
                    ("grpc.max_receive_message_length", -1)]) as channel:
                work(zarrd_pb2_grpc.ZarrdStub(channel))
            return server.log_text()
        finally:
            assert server.stop() == 0

    def read(stub, *items):
        r = stub.GetItem(pb.GetItemRequest(store="mem", path="a", selection=sel(*items)))
        return np.frombuffer(r.data, "<f4").reshape(r.array.shape)

    def work(stub):
        create(stub, "mem", "a", meta)
        stub.SetItem(pb.SetItemRequest(store="mem", path="a", data=values.tobytes()))
        assert stub.ServerInfo(pb.ServerInfoRequest()).epoch != 0
        # 4 x 4 chunks of 256 KiB: 4 MiB decoded, short. Every 4th column of 8 x 3 chunks: a
        # 1.5 MiB result, but 6 MiB decoded, a worker's.
        np.testing.assert_array_equal(read(stub, slice(0, 1024), slice(0, 1024)),
                                      values[:1024, :1024])
        np.testing.assert_array_equal(read(stub, slice(None), slice(0, 768, 4)),
                                      values[:, :768:4])
        results, errors = {}, []

        def reader(k):
            try:
                results[k] = read(stub, slice(256 * (k % 8), 256 * (k % 8) + 256), slice(0, 512))
            except Exception as e:  # noqa: BLE001 - asserted below
                errors.append(e)

        threads = [threading.Thread(target=reader, args=(k,)) for k in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(results) == 32
        for k, got in results.items():
            np.testing.assert_array_equal(got, values[256 * (k % 8):256 * (k % 8) + 256, :512])

    def where(log, pattern):
        return re.findall(pattern + r" -> OK \([0-9.]+ ms, (\w+)\)", log)

    log = serve(1, work)
    assert where(log, "ServerInfo ") == ["inline"]
    assert where(log, "SetItem mem:a") == ["worker"]
    assert where(log, "CreateNode mem:a") == ["worker"]
    reads = where(log, "GetItem mem:a")
    assert reads[:2] == ["inline", "worker"] and len(reads) == 34
    assert "inline" in reads[2:]
    log = serve(0, work)
    assert set(where(log, "(?:ServerInfo |GetItem mem:a)")) == {"worker"}
