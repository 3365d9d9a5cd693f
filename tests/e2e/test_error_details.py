"""Errors a client acts on carry a structured reason (proto/zarrd/v1/error.proto): a
google.rpc.Status with an ErrorInfo in the `grpc-status-details-bin` trailer, decoded here with
Python's protobuf, and the clients branch on it (a restarted zarrd's lost host regions)."""
import grpc
import numpy as np
import pytest

import zarrd
from conftest import Server, sel
from zarrd.v1 import error_pb2
from zarrd.v1 import zarrd_pb2 as pb


def details(error):
    raw = dict(error.trailing_metadata()).get("grpc-status-details-bin")
    assert raw is not None, "no status details"
    status = error_pb2.RpcStatus.FromString(raw)
    assert status.code == error.code().value[0] and status.message == error.details()
    (any_detail,) = status.details
    assert any_detail.type_url == "type.googleapis.com/google.rpc.ErrorInfo"
    info = error_pb2.ErrorInfo.FromString(any_detail.value)
    assert info.domain == "zarrd"
    return info.reason


def test_reasons_on_the_wire(stub):
    stub.CreateNode(pb.CreateNodeRequest(store="mem", path="a", kind=pb.NODE_KIND_ARRAY, metadata_json=(
        '{"zarr_format": 3, "node_type": "array", "shape": [3000, 1000], "data_type": "float64",'
        ' "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1000, 1000]}},'
        ' "chunk_key_encoding": {"name": "default"}, "fill_value": 0,'
        ' "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}')))
    with pytest.raises(grpc.RpcError) as e:
        stub.GetItem(pb.GetItemRequest(store="mem", path="a", selection=sel(0), host_region=pb.HostRegionTarget(
            region_id="host-00000000000000000000000000000000", nbytes=8000)))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert details(e.value) == "HOST_REGION_NOT_REGISTERED"
    with pytest.raises(grpc.RpcError) as e:  # 24 MB: past the unary limit
        stub.GetItem(pb.GetItemRequest(store="mem", path="a"))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details(e.value) == "UNARY_RESULT_TOO_LARGE"
    with pytest.raises(grpc.RpcError) as e:  # an error without a reason has no details
        stub.GetItem(pb.GetItemRequest(store="mem", path="nothing"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert "grpc-status-details-bin" not in dict(e.value.trailing_metadata() or ())


def test_python_errors_carry_the_reason_and_regions_come_back_after_a_restart(tmp_path):
    server = Server(tmp_path)
    try:
        with zarrd.connect(server.unix) as c:
            values = np.arange(300_000, dtype="float64").reshape(300, 1000)  # 2.4 MB: a host region
            a = c.create_array("local", "r", shape=values.shape, dtype="float64", chunks=(100, 1000))
            a[:] = values
            np.testing.assert_array_equal(a[:], values)
            assert c.host_regions.wanted(values.nbytes)  # the read goes through a host region
            with pytest.raises(zarrd.NotFoundError) as e:
                c.open("local", "absent")
            assert e.value.reason == ""
            server.stop()
            server = Server(tmp_path)  # the same socket; the old regions are gone
            np.testing.assert_array_equal(a[:], values)  # re-registered on HOST_REGION_NOT_REGISTERED
            assert c.host_regions.enabled
    finally:
        assert server.stop() == 0, server.exit_report()
