"""SIGTERM: zarrd stops taking requests, finishes those in flight, exits 0, loses no
acknowledged write."""
import json
import signal
import threading
import time

import grpc
import numpy as np
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

from conftest import Server


def meta(shape, chunks):
    return json.dumps({"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "float32",
                       "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
                       "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                       "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                  {"name": "zstd", "configuration": {"level": 1}}]})


def connect(server):
    channel = grpc.insecure_channel(server.unix, options=[("grpc.max_receive_message_length", -1)])
    return channel, zarrd_pb2_grpc.ZarrdStub(channel)


def test_sigterm_during_a_long_streamed_read_finishes_it(tmp_path):
    server = Server(tmp_path)
    channel, stub = connect(server)
    n = 4096
    stub.CreateNode(pb.CreateNodeRequest(store="local", path="big", kind=pb.NODE_KIND_ARRAY,
                                         metadata_json=meta([n, n], [512, 512])))
    values = np.arange(n * n, dtype="<f4").reshape(n, n)
    pieces = [pb.SetItemRequest(store="local", path="big", offset=0, data=values.tobytes()[:4 << 20])]
    raw = values.tobytes()
    pieces += [pb.SetItemRequest(offset=o, data=raw[o:o + (4 << 20)]) for o in range(4 << 20, len(raw), 4 << 20)]
    stub.SetItemStream(iter(pieces))
    received = bytearray(len(raw))
    count = 0
    for msg in stub.GetItemStream(pb.GetItemRequest(store="local", path="big")):
        received[msg.offset:msg.offset + len(msg.data)] = msg.data
        count += len(msg.data)
        if msg.offset == 0 and msg.data:
            server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.02)  # a slow reader: the stream outlives the signal
    assert count == len(raw) and bytes(received) == raw
    assert server.proc.wait(timeout=30) == 0
    assert "shutting down" in server.log_text() and "stopped" in server.log_text()
    channel.close()


def test_sigterm_during_writes_keeps_every_acknowledged_one(tmp_path):
    server = Server(tmp_path)
    channel, stub = connect(server)
    rows, cols = 400, 256
    stub.CreateNode(pb.CreateNodeRequest(store="local", path="w", kind=pb.NODE_KIND_ARRAY,
                                         metadata_json=meta([rows, cols], [8, 256])))
    acked, refused = set(), []
    lock = threading.Lock()

    def writer(first):
        for r in range(first, rows, 8):
            row = np.full(cols, r + 1, dtype="<f4")
            sel = pb.Selection()
            sel.items.add(index=r)
            try:
                stub.SetItem(pb.SetItemRequest(store="local", path="w", selection=sel, data=row.tobytes()))
                with lock:
                    acked.add(r)
            except grpc.RpcError as e:
                with lock:
                    refused.append(e.code())
            time.sleep(0.002)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    server.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join()
    assert server.proc.wait(timeout=30) == 0
    channel.close()
    assert acked, "no write was acknowledged before the signal"
    assert all(c in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) for c in refused), refused
    again = Server(tmp_path)
    channel, stub = connect(again)
    r = stub.GetItem(pb.GetItemRequest(store="local", path="w"))
    got = np.frombuffer(r.data, "<f4").reshape(rows, cols)
    for row in range(rows):
        if row in acked:
            assert np.all(got[row] == row + 1), row
        else:
            assert np.all(got[row] == 0) or np.all(got[row] == row + 1), row
    print(f"\n{len(acked)} writes acknowledged before SIGTERM, {len(refused)} refused, all acknowledged ones on disk")
    channel.close()
    again.stop()


def test_deadline_cancels_a_streamed_read_and_the_server_goes_on(tmp_path):
    server = Server(tmp_path)
    channel, stub = connect(server)
    n = 8192  # 256 MiB: more than the server queues ahead, so decoding must stop
    stub.CreateNode(pb.CreateNodeRequest(store="mem", path="big", kind=pb.NODE_KIND_ARRAY,
                                         metadata_json=meta([n, n], [512, 512])))
    raw = np.ones((n, n), dtype="<f4").tobytes()
    stub.SetItemStream(iter([pb.SetItemRequest(store="mem", path="big", offset=o, data=raw[o:o + (4 << 20)])
                             for o in range(0, len(raw), 4 << 20)]))
    received = 0
    try:
        # A deadline long enough for the call to reach a loaded server (CI's 2 cores run other
        # tests beside this one), far too short for 64 pieces at 0.3 s each.
        for msg in stub.GetItemStream(pb.GetItemRequest(store="mem", path="big"), timeout=3):
            received += len(msg.data)
            time.sleep(0.3)
        raise AssertionError("the deadline did not end the stream")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert 0 < received < len(raw)
    deadline = time.time() + 5
    while "GetItemStream mem:big -> CANCELLED" not in server.log_text() and time.time() < deadline:
        time.sleep(0.05)
    assert "GetItemStream mem:big -> CANCELLED" in server.log_text(), server.log_text()[-2000:]
    assert "GetItemStream mem:big -> OK" not in server.log_text()
    # Still serving.
    r = stub.GetItem(pb.GetItemRequest(store="mem", path="big", selection=pb.Selection(items=[pb.SelectionItem(index=7)])))
    assert np.all(np.frombuffer(r.data, "<f4") == 1)
    channel.close()
    assert server.stop() == 0
