"""GetTree: a group and everything below it in one request, from the group's consolidated
metadata when it has some. The Python client's members/tree/arrays and the xarray backend make
one metadata request (counted by zarrd_requests_total); the answer matches the one built from
the stored documents, and zarr 2.13's open_consolidated sees the same hierarchy."""
import re

import numpy as np
import pytest
import zarr
from test_metrics import get, scrape

import zarrd
from zarrd.v1 import zarrd_pb2 as pb

METADATA_METHODS = ("GetNode", "ListNodes", "GetTree")


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


@pytest.fixture
def count_requests(server):
    url = re.search(r"metrics on (http://\S+)", server.log_text()).group(1)

    def counts():
        values = scrape(url)
        return {m: sum(v for k, v in values.items()
                       if k.startswith("zarrd_requests_total{") and f'method="{m}"' in k)
                for m in METADATA_METHODS}

    return counts


def build(client, zarr_format):
    g = client.create_group("local", "h", zarr_format=zarr_format, attributes={"title": "h"})
    t = g.create_array("t", shape=(6,), dtype="<f8", chunks=(3,), zarr_format=zarr_format,
                       attributes={"_ARRAY_DIMENSIONS": ["x"]})
    t[:] = np.arange(6.0) + 1
    x = g.create_array("x", shape=(6,), dtype="<i8", zarr_format=zarr_format,
                       attributes={"_ARRAY_DIMENSIONS": ["x"]})
    x[:] = np.arange(6) + 10
    sub = g.create_group("sub", zarr_format=zarr_format, attributes={"level": 1})
    sub.create_array("deep", shape=(2, 3), dtype="<i4", zarr_format=zarr_format)
    sub.create_group("inner", zarr_format=zarr_format).create_array(
        "leaf", shape=(4,), dtype="<u1", zarr_format=zarr_format)
    client.consolidate("local", "h")
    return g


def described(reply):
    return [(n.path, n.kind, n.metadata_json if n.kind == pb.NODE_KIND_ARRAY else n.attributes_json)
            for n in reply.nodes]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_tree_from_consolidated_equals_tree_from_documents(client, zarr_format):
    build(client, zarr_format)
    from_copy = client.stub.GetTree(pb.GetTreeRequest(store="local", path="h"))
    from_documents = client.stub.GetTree(
        pb.GetTreeRequest(store="local", path="h", ignore_consolidated=True))
    assert from_copy.consolidated and not from_documents.consolidated
    assert [n.path for n in from_copy.nodes] == \
        ["h", "h/sub", "h/sub/deep", "h/sub/inner", "h/sub/inner/leaf", "h/t", "h/x"]
    assert described(from_copy)[1:] == described(from_documents)[1:]
    one_level = client.stub.GetTree(pb.GetTreeRequest(store="local", path="h", max_depth=1))
    assert [n.path for n in one_level.nodes] == ["h", "h/sub", "h/t", "h/x"]
    with pytest.raises(zarrd.errors.NotFoundError):
        client.open_tree("local", "nowhere")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_members_tree_and_arrays_make_one_request(client, count_requests, zarr_format):
    build(client, zarr_format)
    g = client.open_group("local", "h")
    before = count_requests()
    members = g.members(max_depth=None)
    assert [name for name, _ in members] == ["sub", "sub/deep", "sub/inner", "sub/inner/leaf",
                                             "t", "x"]
    nodes = dict(members)
    assert nodes["sub/inner/leaf"].shape == (4,) and nodes["sub/inner/leaf"].dtype == np.uint8
    assert nodes["sub"].attrs["level"] == 1
    # Walking the groups it returned asks nothing more.
    assert [name for name, _ in nodes["sub"].arrays()] == ["deep"]
    assert [name for name, _ in nodes["sub"].members(max_depth=None)] == \
        ["deep", "inner", "inner/leaf"]
    np.testing.assert_array_equal(dict(g.arrays())["t"][...], np.arange(6.0) + 1)
    after = count_requests()
    assert after["GetTree"] - before["GetTree"] == 2  # members(), then arrays()
    assert after["GetNode"] == before["GetNode"] and after["ListNodes"] == before["ListNodes"]
    text = str(g.tree())
    assert "leaf (4,) uint8" in text and "deep (2, 3) int32" in text
    assert count_requests()["GetTree"] - after["GetTree"] == 1


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_xarray_open_dataset_makes_one_metadata_request(client, server, count_requests,
                                                        zarr_format):
    xr = pytest.importorskip("xarray")
    from zarrd.xarray_backend import ZarrdBackendEntrypoint, open_groups
    build(client, zarr_format)
    before = count_requests()
    ds = xr.open_dataset("zarrd://local/h", engine=ZarrdBackendEntrypoint, address=server.unix)
    assert ds.attrs["title"] == "h"
    np.testing.assert_array_equal(ds["t"].values, np.arange(6.0) + 1)
    np.testing.assert_array_equal(ds["x"].values, np.arange(6) + 10)
    ds.close()
    after = count_requests()
    assert {m: after[m] - before[m] for m in METADATA_METHODS} == \
        {"GetNode": 0, "ListNodes": 0, "GetTree": 1}
    groups = open_groups("zarrd://local/h", address=server.unix)
    assert sorted(groups) == ["/", "/sub", "/sub/inner"]
    assert count_requests()["GetTree"] - after["GetTree"] == 1
    assert count_requests()["GetNode"] == after["GetNode"]


def test_v2_tree_as_zarr2_open_consolidated_sees_it(client, server):
    build(client, 2)
    ours = client.open_tree("local", "h")
    theirs = zarr.open_consolidated(str(server.workdir / "data" / "h"), mode="r")
    paths = []
    theirs.visit(paths.append)
    assert sorted(name for name, _ in ours.members(max_depth=None)) == sorted(paths)
    for name, node in ours.members(max_depth=None):
        if isinstance(node, zarrd.Array):
            assert node.shape == theirs[name].shape and node.dtype == theirs[name].dtype


def test_stale_copy_written_by_another_writer(client, server):
    """zarrd answers from the copy as zarr-python does; reads of an array use its own document,
    and `consolidated=False` (ignore_consolidated) sees the stored documents."""
    build(client, 2)
    root = server.workdir / "data" / "h"
    outside = zarr.open_group(str(root), mode="r+")  # zarr 2.13, behind zarrd's back
    outside.create_dataset("late", data=np.arange(3, dtype="<i2"))
    outside["t"].resize(9)
    outside["t"][6:] = [7.0, 8.0, 9.0]
    stale = client.open_tree("local", "h")
    assert "late" not in dict(stale.members()) and dict(stale.members())["t"].shape == (6,)
    fresh = client.open_tree("local", "h", consolidated=False)
    assert dict(fresh.members())["late"].shape == (3,) and dict(fresh.members())["t"].shape == (9,)
    # Reads never go through the copy: the array missing from it reads from its own document.
    np.testing.assert_array_equal(client.open_array("local", "h/late")[...], np.arange(3))
