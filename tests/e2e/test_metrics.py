"""The Prometheus endpoint: scraped before, during and after reads and writes of known sizes;
the counters move by exactly what the requests did."""
import json
import re
import urllib.request

import numpy as np
from conftest import Server, sel
from test_grpc_python import V3, create
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc
import grpc


def scrape(url):
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        values[name] = float(value)
    return values


def get(values, name, **labels):
    """The sample `name` whose labels include `labels` (0 when absent)."""
    for key, v in values.items():
        base, _, rest = key.partition("{")
        if base != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', rest))
        if all(have.get(k) == str(x) for k, x in labels.items()):
            return v
    return 0.0


def test_counters_move_by_what_the_requests_did(tmp_path):
    server = Server(tmp_path)
    url = re.search(r"metrics on (http://\S+)", server.log_text()).group(1)
    assert url.startswith("http://127.0.0.1:")  # loopback by default
    channel = grpc.insecure_channel(server.unix, options=[("grpc.max_receive_message_length", -1),
                                                         ("grpc.max_send_message_length", -1)])
    stub = zarrd_pb2_grpc.ZarrdStub(channel)
    create(stub, "local", "m")  # 300 x 200 float32, 64 x 64 chunks: 5 x 4 = 20 chunks
    values = np.random.default_rng(0).standard_normal((300, 200)).astype("<f4")
    before = scrape(url)
    stub.SetItem(pb.SetItemRequest(store="local", path="m", data=values.tobytes()))
    for _ in range(3):
        stub.GetItem(pb.GetItemRequest(store="local", path="m"))
    stub.GetItem(pb.GetItemRequest(store="local", path="m", selection=sel(slice(0, 64), slice(0, 64))))
    try:
        stub.GetItem(pb.GetItemRequest(store="local", path="nope"))
    except grpc.RpcError:
        pass
    after = scrape(url)
    delta = lambda name, **kw: get(after, name, **kw) - get(before, name, **kw)  # noqa: E731
    assert delta("zarrd_requests_total", method="GetItem", code="OK") == 4
    assert delta("zarrd_requests_total", method="GetItem", code="NOT_FOUND") == 1
    assert delta("zarrd_requests_total", method="SetItem", code="OK") == 1
    assert delta("zarrd_read_bytes_total", prototype="host") == 3 * values.nbytes + 64 * 64 * 4
    assert delta("zarrd_written_bytes_total", source="bytes") == values.nbytes
    assert delta("zarrd_chunks_total", op="encoded") == 20
    assert delta("zarrd_chunks_total", op="decoded") == 3 * 20 + 1
    assert delta("zarrd_request_duration_seconds_count", method="GetItem") == 5
    assert get(after, "zarrd_regions", kind="host") == 0

    # During a streamed read: the request is in flight; after it, the stream's bytes count.
    big = dict(V3, shape=[4096, 2048], codecs=[{"name": "bytes", "configuration": {"endian": "little"}}])
    stub.CreateNode(pb.CreateNodeRequest(store="mem", path="big", kind=pb.NODE_KIND_ARRAY,
                                         metadata_json=json.dumps(big)))
    before = scrape(url)
    stream = stub.GetItemStream(pb.GetItemRequest(store="mem", path="big"))
    first = next(stream)
    during = scrape(url)
    assert get(during, "zarrd_in_flight_requests") >= 1
    received = len(first.data) + sum(len(m.data) for m in stream)
    assert received == 4096 * 2048 * 4
    after = scrape(url)
    assert delta("zarrd_requests_total", method="GetItemStream", code="OK") == 1
    assert delta("zarrd_read_bytes_total", prototype="host") == received
    assert delta("zarrd_chunks_total", op="filled") == 64 * 32  # nothing was written: all fill
    channel.close()
    assert server.stop() == 0
