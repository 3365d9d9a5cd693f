"""Node lifecycle against data: no node inside an array, a delete racing writes leaves nothing
behind, a failed resize changes nothing."""
import json
import threading
import time

import grpc
import numpy as np
import pytest
from conftest import Server, sel
from zarrd.v1 import zarrd_pb2 as pb
from zarrd.v1 import zarrd_pb2_grpc

from hardening_util import v3_array

CODE = grpc.StatusCode


@pytest.fixture
def env(tmp_path):
    server = Server(tmp_path)
    channel = grpc.insecure_channel(server.unix)
    yield server, zarrd_pb2_grpc.ZarrdStub(channel), tmp_path / "data"
    channel.close()
    assert server.stop() == 0, server.exit_report()


def create(stub, path, meta):
    return stub.CreateNode(pb.CreateNodeRequest(store="local", path=path, kind=pb.NODE_KIND_ARRAY,
                                                metadata_json=json.dumps(meta)))


def code_of(call, req):
    try:
        call(req)
    except grpc.RpcError as e:
        return e.code()
    return CODE.OK


def read(stub, path, dtype, shape, *items):
    r = stub.GetItem(pb.GetItemRequest(store="local", path=path, selection=sel(*items)))
    return np.frombuffer(r.data, dtype).reshape(shape)


V2 = {"zarr_format": 2, "shape": [8], "chunks": [2], "dtype": "<i4", "order": "C",
      "fill_value": 0, "compressor": None, "filters": None}


@pytest.mark.parametrize("meta,inside", [(v3_array([8], [2]), ["c", "c/0", "c/0/x"]),
                                         (V2, ["0", "1/x", "sub"])])
def test_no_node_inside_an_array(env, meta, inside):
    _, stub, data = env
    values = np.arange(8, dtype="<i4") * 7 + 1
    create(stub, "P", meta)
    stub.SetItem(pb.SetItemRequest(store="local", path="P", data=values.tobytes()))
    files = sorted(p.relative_to(data) for p in data.rglob("*"))
    for name in inside:
        path = f"P/{name}"
        with pytest.raises(grpc.RpcError) as e:
            stub.CreateNode(pb.CreateNodeRequest(store="local", path=path, kind=pb.NODE_KIND_GROUP))
        assert e.value.code() == CODE.FAILED_PRECONDITION, e.value.details()
        assert "'P' is an array" in e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            create(stub, path, v3_array([1], [1]))
        assert e.value.code() == CODE.FAILED_PRECONDITION, e.value.details()
        assert code_of(stub.DeleteNode, pb.NodeRequest(store="local", path=path)) == CODE.NOT_FOUND
    assert code_of(stub.DeleteNode, pb.NodeRequest(store="local", path="P/c/0")) == CODE.NOT_FOUND
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == files
    np.testing.assert_array_equal(read(stub, "P", "<i4", (8,)), values)


def test_delete_of_what_is_no_node_deletes_nothing(env):
    _, stub, data = env
    (data / "loose").mkdir(parents=True)
    (data / "loose" / "key").write_bytes(b"x")
    assert code_of(stub.DeleteNode, pb.NodeRequest(store="local", path="loose")) == CODE.NOT_FOUND
    assert (data / "loose" / "key").read_bytes() == b"x"


def writer(stub, codes, stop):
    values = np.arange(64 * 64, dtype="<i4").reshape(64, 64)
    while not stop.is_set():
        codes.append(code_of(stub.SetItem, pb.SetItemRequest(store="local", path="d",
                                                             data=values.tobytes())))


@pytest.mark.parametrize("trial", range(5))
def test_delete_racing_writes_leaves_nothing(env, trial):
    """Three writers, a delete after 150 ms: afterwards the array is gone for every client, no
    chunk file is left, and a new array at the path reads its fill value."""
    server, stub, data = env
    create(stub, "d", v3_array([64, 64], [8, 8]))
    codes, stop = [], threading.Event()
    threads = [threading.Thread(target=writer, args=(stub, codes, stop)) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.15)
    stub.DeleteNode(pb.NodeRequest(store="local", path="d"))
    while codes.count(CODE.NOT_FOUND) < 3:
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join()
    assert set(codes) <= {CODE.OK, CODE.NOT_FOUND}, set(codes)
    assert CODE.OK in codes
    assert code_of(stub.GetNode, pb.NodeRequest(store="local", path="d")) == CODE.NOT_FOUND
    fresh = zarrd_pb2_grpc.ZarrdStub(grpc.insecure_channel(server.tcp))
    assert code_of(fresh.GetItem, pb.GetItemRequest(store="local", path="d")) == CODE.NOT_FOUND
    assert code_of(fresh.SetItem, pb.SetItemRequest(store="local", path="d",
                                                    data=bytes(4 * 64 * 64))) == CODE.NOT_FOUND
    assert not (data / "d").exists() or not any(p.is_file() for p in (data / "d").rglob("*"))
    create(stub, "d", v3_array([64, 64], [8, 8]))
    assert not read(stub, "d", "<i4", (64, 64)).any()


def test_failed_resize_changes_nothing(env):
    """Shrinking [1, 1200] (chunks [1, 100]) to [1, 250] with a corrupt edge chunk c/0/2: DATA_LOSS,
    and c/0/10, c/0/11 (first in string order) are still there."""
    _, stub, data = env
    values = np.arange(1200, dtype="<i4").reshape(1, 1200) * 3 + 5
    create(stub, "r", v3_array([1, 1200], [1, 100]))
    stub.SetItem(pb.SetItemRequest(store="local", path="r", data=values.tobytes()))
    (data / "r" / "c" / "0" / "2").write_bytes(b"not zstd")
    with pytest.raises(grpc.RpcError) as e:
        stub.Resize(pb.ResizeRequest(store="local", path="r", shape=[1, 250]))
    assert e.value.code() == CODE.DATA_LOSS, e.value.details()
    assert "c/0/2" in e.value.details()
    assert sorted(int(p.name) for p in (data / "r" / "c" / "0").iterdir()) == list(range(12))
    node = stub.GetNode(pb.NodeRequest(store="local", path="r"))
    assert list(node.shape) == [1, 1200]
    np.testing.assert_array_equal(read(stub, "r", "<i4", (1, 300), slice(None), slice(900, None)),
                                  values[:, 900:])
