"""Hostile sizes, documents, files, sockets and flags: each is refused at once with its code and a
message naming what was wrong, zarrd's memory stays bounded, and it keeps serving."""
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
from conftest import ZARRCTL, ZARRD, Server, sel
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

from hardening_util import SANITIZED, rss_bytes

CODE = grpc.StatusCode
MiB = 1 << 20
# What zarrd's RSS may grow by over its idle figure during and after these tests: none of them
# needs more than a few MiB of zarrd's memory when refused as it should be.
RSS_BOUND = 200 * MiB


@pytest.fixture
def env(tmp_path):
    server = Server(tmp_path, {"max_result_bytes": 64 * MiB, "max_request_bytes": 64 * MiB})
    channel = grpc.insecure_channel(server.unix, options=[("grpc.max_receive_message_length", -1),
                                                          ("grpc.max_send_message_length", -1)])
    yield server, zarrd_pb2_grpc.ZarrdStub(channel), tmp_path / "data"
    channel.close()
    assert server.stop() == 0, server.exit_report()


def refused(call, req, code, *words, timeout=10):
    with pytest.raises(grpc.RpcError) as e:
        result = call(req, timeout=timeout)
        if hasattr(result, "__iter__") and not isinstance(result, (bytes, str)):
            list(result)
    assert e.value.code() == code, (e.value.code(), e.value.details())
    for w in words:
        assert w in e.value.details(), (w, e.value.details())
    return e.value.details()


def v3(shape, chunks, dtype="float32", **extra):
    return dict({"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}, **extra)


def create_req(path, meta):
    return pb.CreateNodeRequest(store="local", path=path, kind=pb.NODE_KIND_ARRAY,
                                metadata_json=json.dumps(meta))


def create(stub, path, meta):
    return stub.CreateNode(create_req(path, meta), timeout=10)


def check_rss(server, idle, what):
    now = rss_bytes(server.proc.pid)
    print(f"{what}: zarrd RSS {now / MiB:.0f} MiB (idle {idle / MiB:.0f} MiB)")
    assert SANITIZED or now <= idle + RSS_BOUND, (what, now, idle)


def test_sizes_that_overflow_64_bits_are_refused_before_any_allocation(env):
    server, stub, data = env
    idle = rss_bytes(server.proc.pid)
    # 2^64 bytes: the size wrapped to 0, the arrays were created.
    for shape in ([2**31, 2**31], [2**62], [2**61]):
        refused(stub.CreateNode, create_req("big", v3(shape, [1] * len(shape))),
                CODE.INVALID_ARGUMENT, "overflows")
    assert not (data / "big").exists()
    # 2^62 one-byte elements are a valid (sparse) array; reading all of it is refused by
    # max_result_bytes (it aborted zarrd or grew it until the OOM killer came).
    create(stub, "huge", v3([2**62], [1], "uint8"))
    for call in (stub.GetItem, stub.GetItemStream):
        refused(call, pb.GetItemRequest(store="local", path="huge"), CODE.RESOURCE_EXHAUSTED,
                "exceeds max_result_bytes")
    create(stub, "sq", v3([2**31, 2**31], [1024, 1024], "uint8"))
    refused(stub.GetItem, pb.GetItemRequest(store="local", path="sq"), CODE.RESOURCE_EXHAUSTED,
            str(2**62))
    # A write whose data does not match its selection: 0 bytes for 2^62 was acknowledged.
    for path in ("huge", "sq"):
        refused(stub.SetItem, pb.SetItemRequest(store="local", path=path, data=b""),
                CODE.RESOURCE_EXHAUSTED, "max_request_bytes")
    refused(stub.SetItem, pb.SetItemRequest(store="local", path="sq", selection=sel(0, slice(0, 4)),
                                            data=b"\0" * 3), CODE.INVALID_ARGUMENT, "3 bytes")
    stub.SetItem(pb.SetItemRequest(store="local", path="sq", selection=sel(0, slice(0, 4)),
                                   data=b"\1\2\3\4"), timeout=10)
    got = stub.GetItem(pb.GetItemRequest(store="local", path="sq", selection=sel(0, slice(0, 5))))
    assert got.data == b"\1\2\3\4\0"
    check_rss(server, idle, "after the oversized requests")
    # zarrctl get of a huge shape fails; it printed "wrote 0 bytes" and exited 0.
    out = subprocess.run([*ZARRCTL, "--address", server.unix, "get", "local:sq", "-o",
                          str(data.parent / "out.bin")], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0, out.stderr
    assert "wrote" not in out.stderr and "memory" in out.stderr, out.stderr


def nested(depth, leaf="1"):
    return '{"a": ' * depth + leaf + "}" * depth


def test_deeply_nested_json_is_refused_fast(env):
    server, stub, data = env
    idle = rss_bytes(server.proc.pid)
    create(stub, "arr", v3([4], [2]))
    stub.CreateNode(pb.CreateNodeRequest(store="local", path="g", kind=pb.NODE_KIND_GROUP,
                                         metadata_json='{"zarr_format": 3, "node_type": "group"}'))
    start = time.time()
    for depth in (65, 30000, 100000):  # 100,000 crashed zarrd; 30,000 took past 10 s
        deep = nested(depth)
        refused(stub.SetAttributes, pb.SetAttributesRequest(store="local", path="arr",
                                                            attributes_json=deep),
                CODE.INVALID_ARGUMENT, "attributes_json", "deeper than 64")
        refused(stub.SetAttributes, pb.SetAttributesRequest(store="local", path="g",
                                                            attributes_json=deep),
                CODE.INVALID_ARGUMENT, "deeper than 64")
        meta = json.dumps(v3([4], [2])).replace('"fill_value": 0', '"fill_value": 0, "attributes": '
                                                + deep)
        refused(stub.CreateNode, pb.CreateNodeRequest(store="local", path="a2",
                                                      kind=pb.NODE_KIND_ARRAY, metadata_json=meta),
                CODE.INVALID_ARGUMENT, "metadata_json", "deeper than 64")
    assert time.time() - start < 5
    # 64 levels are accepted, and the zarr.json that holds them one level down reads back.
    stub.SetAttributes(pb.SetAttributesRequest(store="local", path="arr",
                                               attributes_json=nested(64)), timeout=10)
    stored = json.loads((data / "arr" / "zarr.json").read_text())["attributes"]
    assert stored == json.loads(nested(64))
    assert json.loads(stub.GetNode(pb.NodeRequest(store="local", path="arr")).attributes_json) \
        == stored
    # A stored zarr.json nested 100,000 deep: DATA_LOSS naming the node, for each way in.
    (data / "deep").mkdir()
    (data / "deep" / "zarr.json").write_text(
        '{"zarr_format": 3, "node_type": "group", "attributes": ' + nested(100000) + "}")
    refused(stub.GetNode, pb.NodeRequest(store="local", path="deep"), CODE.DATA_LOSS,
            "deep/zarr.json", "nests deeper")
    refused(stub.GetItem, pb.GetItemRequest(store="local", path="deep"), CODE.DATA_LOSS,
            "deep/zarr.json")
    # Its parent lists the rest (the broken child is skipped with a warning in the log).
    listed = stub.ListNodes(pb.NodeRequest(store="local", path=""), timeout=10)
    assert sorted(n.name for n in listed.nodes) == ["arr", "g"]
    assert 'skipping child "deep"' in server.log_text()
    check_rss(server, idle, "after the deep documents")


def test_hostile_files_in_the_store(env):
    server, stub, data = env
    idle = rss_bytes(server.proc.pid)
    create(stub, "a", v3([64, 64], [32, 32]))
    stub.SetItem(pb.SetItemRequest(store="local", path="a",
                                   data=np.arange(64 * 64, dtype="<f4").tobytes()), timeout=10)
    # A FIFO as a chunk and as a zarr.json: open() blocked forever, and after ~20 such requests
    # every other request timed out.
    os.unlink(data / "a" / "c" / "0" / "0")
    os.mkfifo(data / "a" / "c" / "0" / "0")
    (data / "f").mkdir()
    os.mkfifo(data / "f" / "zarr.json")
    for _ in range(30):
        refused(stub.GetItem, pb.GetItemRequest(store="local", path="a"), CODE.DATA_LOSS,
                "c/0/0", "not a regular file", timeout=5)
        refused(stub.GetNode, pb.NodeRequest(store="local", path="f"), CODE.DATA_LOSS,
                "f/zarr.json", "not a regular file", timeout=5)
    got = stub.GetItem(pb.GetItemRequest(store="local", path="a", selection=sel(slice(32, 64))),
                       timeout=5)
    np.testing.assert_array_equal(np.frombuffer(got.data, "<f4"),
                                  np.arange(32 * 64, 64 * 64, dtype="<f4"))
    # Sparse 40 GiB files as a chunk and as a zarr.json: DATA_LOSS before they are read (they
    # aborted zarrd; GetNode answered UNIMPLEMENTED with an empty message).
    os.unlink(data / "a" / "c" / "0" / "0")
    with open(data / "a" / "c" / "0" / "0", "wb") as f:
        f.truncate(40 << 30)
    (data / "s").mkdir()
    with open(data / "s" / "zarr.json", "wb") as f:
        f.truncate(40 << 30)
    start = time.time()
    refused(stub.GetItem, pb.GetItemRequest(store="local", path="a"), CODE.DATA_LOSS, "c/0/0",
            str(40 << 30))
    refused(stub.GetNode, pb.NodeRequest(store="local", path="s"), CODE.DATA_LOSS, "s/zarr.json",
            str(40 << 30))
    refused(stub.GetItem, pb.GetItemRequest(store="local", path="s"), CODE.DATA_LOSS, "s/zarr.json")
    assert time.time() - start < 5
    # A write into the chunk reads it first (read-modify-write): refused the same way.
    refused(stub.SetItem, pb.SetItemRequest(store="local", path="a", selection=sel(0, 0),
                                            data=b"\0\0\0\0"), CODE.DATA_LOSS, "c/0/0")
    check_rss(server, idle, "after the FIFOs and sparse files")
    # A directory tree 30,000 deep (ListNodes and DeleteNode crashed with SIGSEGV).
    fd = os.open(data, os.O_DIRECTORY)
    os.mkdir("t", dir_fd=fd)
    cur = os.open("t", os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    (data / "t" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
    for _ in range(30000):
        os.mkdir("d", dir_fd=cur)
        nxt = os.open("d", os.O_DIRECTORY, dir_fd=cur)
        os.close(cur)
        cur = nxt
    with open(os.open("zarr.json", os.O_WRONLY | os.O_CREAT, dir_fd=cur), "w") as f:
        f.write('{"zarr_format": 3, "node_type": "group"}')
    os.close(cur)
    (data / "t" / "d" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
    listed = stub.ListNodes(pb.NodeRequest(store="local", path="t"), timeout=120)
    assert [n.name for n in listed.nodes] == ["d"]
    # Its deepest key is 60,000 bytes long, past what a path may be: refused, nothing deleted.
    refused(stub.DeleteNode, pb.NodeRequest(store="local", path="t"), CODE.INVALID_ARGUMENT,
            "bytes long, more than 4000", timeout=120)
    assert (data / "t" / "zarr.json").exists()
    assert stub.ServerInfo(pb.ServerInfoRequest(), timeout=5).version
    check_rss(server, idle, "after the deep tree")
    # What DeleteNode leaves, the empty directories: rm walks them without a descriptor a level.
    subprocess.run(["rm", "-rf", str(data / "t")], check=True, timeout=120)


def test_stream_bytes_is_off_by_default_and_bounded_when_on(tmp_path):
    (tmp_path / "off").mkdir()
    off = Server(tmp_path / "off")
    try:
        with grpc.insecure_channel(off.unix) as ch:
            refused(zarrd_pb2_grpc.ZarrdStub(ch).StreamBytes, pb.StreamBytesRequest(nbytes=10),
                    CODE.UNIMPLEMENTED, "enable_stream_bytes")
    finally:
        assert off.stop() == 0
    (tmp_path / "on").mkdir()
    on = Server(tmp_path / "on", {"enable_stream_bytes": True, "stream_bytes_max_bytes": 3 << 30})
    try:
        idle = rss_bytes(on.proc.pid)
        with grpc.insecure_channel(on.unix, options=[("grpc.max_receive_message_length", -1)]) as ch:
            stub = zarrd_pb2_grpc.ZarrdStub(ch)
            refused(stub.StreamBytes, pb.StreamBytesRequest(nbytes=(3 << 30) + 1),
                    CODE.RESOURCE_EXHAUSTED, "stream_bytes_max_bytes")
            # A distinct buffer of 3 GiB takes seconds to build: it stops at the deadline.
            start = time.time()
            with pytest.raises(grpc.RpcError) as e:
                list(stub.StreamBytes(pb.StreamBytesRequest(nbytes=3 << 30, distinct=True),
                                      timeout=0.2))
            assert e.value.code() == CODE.DEADLINE_EXCEEDED
            time.sleep(0.5)
            peak = rss_bytes(on.proc.pid)
            print(f"StreamBytes past its deadline: RSS {peak / MiB:.0f} MiB, "
                  f"idle {idle / MiB:.0f} MiB, {time.time() - start:.2f} s")
            assert SANITIZED or peak <= idle + 1024 * MiB
            got = b"".join(m.data for m in stub.StreamBytes(
                pb.StreamBytesRequest(nbytes=5 * MiB + 3, distinct=True), timeout=30))
            assert len(got) == 5 * MiB + 3
    finally:
        assert on.stop() == 0


def start_zarrd(workdir, *args):
    log = open(workdir / "second.log", "w+")
    return subprocess.Popen([*ZARRD, *args], stdout=log, stderr=subprocess.STDOUT, cwd=workdir), log


def test_a_second_zarrd_refuses_a_live_socket_and_takes_a_dead_one(env, tmp_path):
    server, stub, data = env
    config = json.loads((tmp_path / "zarrd.json").read_text())
    config["listen"] = [f"unix:{server.socket}"]
    config["metrics_listen"] = ""  # so that the socket, not the metrics port, is what stops it
    (tmp_path / "second.json").write_text(json.dumps(config))
    proc, log = start_zarrd(tmp_path, "--config", str(tmp_path / "second.json"))
    assert proc.wait(timeout=20) != 0
    text = Path(log.name).read_text()
    assert "another server answers on" in text and str(server.socket) in text, text
    # The first one still answers on its socket, also after the second is gone.
    assert stub.ServerInfo(pb.ServerInfoRequest(), timeout=5).version
    # A socket nothing answers on (its zarrd was killed) is removed and taken over.
    dead = tmp_path / "dead.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(dead))
    s.close()
    config["listen"] = [f"unix:{dead}"]
    config["metrics_listen"] = "127.0.0.1:0"
    (tmp_path / "third.json").write_text(json.dumps(config))
    proc, log = start_zarrd(tmp_path, "--config", str(tmp_path / "third.json"),
                            "--metrics-listen", "off")
    try:
        deadline = time.time() + 20
        while "ready" not in Path(log.name).read_text() and time.time() < deadline:
            assert proc.poll() is None, Path(log.name).read_text()
            time.sleep(0.05)
        text = Path(log.name).read_text()
        assert "removed the stale socket" in text and "metrics on" not in text, text
        with grpc.insecure_channel(f"unix:{dead}") as ch:
            assert zarrd_pb2_grpc.ZarrdStub(ch).ServerInfo(pb.ServerInfoRequest(), timeout=5).version
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    # A regular file where the socket should be is not removed.
    (tmp_path / "file.sock").write_text("mine")
    config["listen"] = [f"unix:{tmp_path / 'file.sock'}"]
    (tmp_path / "fourth.json").write_text(json.dumps(config))
    proc, log = start_zarrd(tmp_path, "--config", str(tmp_path / "fourth.json"))
    assert proc.wait(timeout=20) != 0
    assert (tmp_path / "file.sock").read_text() == "mine"


def test_metrics_listen_flag_and_half_open_connections(tmp_path):
    port_probe = socket.socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    (tmp_path / "data").mkdir()
    (tmp_path / "z.json").write_text(json.dumps({"stores": [{"name": "local", "root": "data"}],
                                                 "listen": ["unix:z.sock"]}))
    proc, log = start_zarrd(tmp_path, "--config", str(tmp_path / "z.json"),
                            "--metrics-listen", f"127.0.0.1:{port}")
    idle_conns = []
    try:
        deadline = time.time() + 20
        while "ready" not in Path(log.name).read_text() and time.time() < deadline:
            assert proc.poll() is None, Path(log.name).read_text()
            time.sleep(0.05)
        assert f"metrics on http://127.0.0.1:{port}/metrics" in Path(log.name).read_text()
        # Connections that never send a request held civetweb's two threads for 30 s each.
        for _ in range(64):
            c = socket.create_connection(("127.0.0.1", port))
            idle_conns.append(c)
        start = time.time()
        c = socket.create_connection(("127.0.0.1", port), timeout=15)
        c.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        reply = b""
        while chunk := c.recv(65536):
            reply += chunk
        c.close()
        took = time.time() - start
        print(f"scrape behind 64 half-open connections: {took:.2f} s")
        assert b"zarrd_in_flight_requests" in reply and took < 10
    finally:
        for c in idle_conns:
            c.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_restart_removes_only_zarrds_own_stale_temporaries(tmp_path):
    (tmp_path / "data" / "a").mkdir(parents=True)
    child = subprocess.Popen(["true"])
    child.wait()
    dead = child.pid
    a = tmp_path / "data" / "a"
    ours = [a / f"k.zarrd-tmp-{dead}-00000000deadbeef-3", a / f"e.zarrd-tmp-{dead}-0123456789abcdef-4"]
    ours[0].write_bytes(b"torn")
    ours[1].write_bytes(b"")  # 0 bytes: a crash between create and write
    users = [a / f"notes.zarrd-tmp-{dead}-draft", a / f"x.zarrd-tmp-{dead}-1"]
    for u in users:
        u.write_text("mine")
    server = Server(tmp_path)
    try:
        deadline = time.time() + 10
        while any(p.exists() for p in ours) and time.time() < deadline:
            time.sleep(0.05)
        assert not any(p.exists() for p in ours)
        assert all(u.read_text() == "mine" for u in users)
    finally:
        assert server.stop() == 0


def test_idle_memory_after_strided_reads_of_64_mib_chunks(tmp_path):
    """Threads kept a decoded and an encoded chunk each (64 MiB apiece) after strided reads:
    idle RSS stayed +320 MiB on the 16-core machine. Idle pool threads now free them."""
    import zarr
    from numcodecs import Zstd
    # Random: the encoded chunks are as large as the decoded ones.
    data = np.random.default_rng(7).random((8192, 4096), dtype=np.float32)
    z = zarr.open(str(tmp_path / "data" / "big"), mode="w", shape=data.shape,
                  chunks=(4096, 4096), dtype="<f4", compressor=Zstd(1))
    z[:] = data
    server = Server(tmp_path)
    try:
        with grpc.insecure_channel(server.unix, options=[
                ("grpc.max_receive_message_length", -1)]) as ch:
            stub = zarrd_pb2_grpc.ZarrdStub(ch)
            stub.ServerInfo(pb.ServerInfoRequest(), timeout=5)
            time.sleep(1.5)
            idle = rss_bytes(server.proc.pid)
            peak = idle
            for step in (2, 3):
                s = sel(slice(None, None, step), slice(None, None, step))
                got = b"".join(m.data for m in stub.GetItemStream(
                    pb.GetItemRequest(store="local", path="big", selection=s), timeout=120))
                np.testing.assert_array_equal(
                    np.frombuffer(got, "<f4").reshape(data[::step, ::step].shape),
                    data[::step, ::step])
                peak = max(peak, rss_bytes(server.proc.pid))
            time.sleep(3)  # the reaper's quiet tick, then the pool threads' idle second
            after = rss_bytes(server.proc.pid)
        print(f"strided reads of 64 MiB chunks: RSS idle {idle / MiB:.0f} MiB, peak "
              f"{peak / MiB:.0f} MiB, idle after {after / MiB:.0f} MiB")
        assert SANITIZED or after <= idle + 48 * MiB
    finally:
        assert server.stop() == 0
