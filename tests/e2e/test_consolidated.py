"""Consolidated metadata kept current by zarrd's writes: v2 checked by Debian's zarr 2.x opening
with zarr.open_consolidated (and against zarr.consolidate_metadata of the same tree), v3 against
the document zarr-python 3 writes, rebuilt here from the node documents on disk."""
import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

import zarrd
from conftest import Server, zarrctl


@pytest.fixture
def client(server):
    with zarrd.connect(server.unix) as c:
        yield c


def load(path):
    return json.loads(Path(path).read_text())


def expected_v3(root):
    """zarr-python 3's consolidated_metadata of the group at `root`: every zarr.json below it
    reached through groups, keyed by relative path, child groups with an empty one of their own."""
    entries = {}

    def walk(directory, prefix):
        for child in sorted(p for p in directory.iterdir() if p.is_dir()):
            doc_path = child / "zarr.json"
            if not doc_path.exists():
                continue
            doc = load(doc_path)
            name = f"{prefix}{child.name}"
            if doc["node_type"] == "group":
                doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False,
                                                "metadata": {}}
                walk(child, name + "/")
            entries[name] = doc

    walk(Path(root), "")
    return {"kind": "inline", "must_understand": False, "metadata": entries}


def test_v2_writes_by_zarrd_are_seen_by_zarr_open_consolidated(client, server, tmp_path):
    zarr = pytest.importorskip("zarr")
    root = server.workdir / "data" / "ds"
    g = zarr.open_group(str(root), mode="w")
    g.attrs["title"] = "by zarr"
    x = g.create_dataset("x", shape=(10,), chunks=(4,), dtype="<i4")
    x[:] = np.arange(10, dtype="<i4")
    g.create_dataset("old", shape=(3,), chunks=(3,), dtype="<f8")
    zarr.consolidate_metadata(str(root))

    ds = client.open_group("local", "ds")
    values = np.arange(24, dtype="<f4").reshape(4, 6) / 3
    y = ds.create_array("y", shape=(4, 6), chunks=(2, 3), dtype="float32", zarr_format=2)
    y[:] = values
    y.attrs["units"] = "m"
    ds.attrs["title"] = "by zarrd"
    client.open_array("local", "ds/x").resize(6)
    z = client.create_array("local", "ds/sub/z", shape=(5,), dtype="int16", zarr_format=2)
    z[:] = np.arange(5, dtype="<i2")
    client.delete("local", "ds/old")

    c = zarr.open_consolidated(str(root), mode="r")
    assert sorted(c.array_keys()) == ["x", "y"]
    assert sorted(c.group_keys()) == ["sub"]
    assert c.attrs["title"] == "by zarrd"
    assert c["x"].shape == (6,)
    np.testing.assert_array_equal(c["x"][:], np.arange(6, dtype="<i4"))
    np.testing.assert_array_equal(c["y"][:], values)
    assert c["y"].attrs["units"] == "m"
    np.testing.assert_array_equal(c["sub/z"][:], np.arange(5, dtype="<i2"))

    # The same documents as zarr's own consolidation of the tree as it is now.
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    zarr.consolidate_metadata(str(copy))
    assert load(root / ".zmetadata") == load(copy / ".zmetadata")
    assert not (root / "sub" / ".zmetadata").exists()


def test_xarray_open_zarr_sees_what_zarrd_changed(client, server):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    root = server.workdir / "data" / "xr"
    xr.Dataset({"t": (("x",), np.arange(6.0))}, coords={"x": np.arange(6)},
               attrs={"title": "by xarray"}).to_zarr(str(root), mode="w")  # consolidated
    assert (root / ".zmetadata").exists()
    client.open_group("local", "xr").attrs["title"] = "by zarrd"
    client.open_array("local", "xr/t").attrs["units"] = "K"
    u = client.create_array("local", "xr/u", shape=(6,), dtype="float64", zarr_format=2,
                            attributes={"_ARRAY_DIMENSIONS": ["x"]})
    u[:] = np.arange(6.0) * 2 + 1  # no 0: xarray reads the fill value (0) as missing
    ds = xr.open_zarr(str(root), consolidated=True)
    assert ds.attrs["title"] == "by zarrd"
    assert ds["t"].attrs["units"] == "K"
    np.testing.assert_array_equal(ds["u"].values, np.arange(6.0) * 2 + 1)
    np.testing.assert_array_equal(ds["t"].values, np.arange(6.0))


def test_v3_consolidated_metadata_is_kept_current(client, server):
    root = server.workdir / "data" / "v3"
    g = client.create_group("local", "v3", attributes={"title": "t"})
    a = g.create_array("a", shape=(4,), chunks=(2,), dtype="int32")
    g.create_group("sub", attributes={"n": 1}).create_array("b", shape=(3, 3), dtype="float64")
    # Without consolidated metadata, none is written.
    assert "consolidated_metadata" not in load(root / "zarr.json")

    g = zarrd.consolidate_metadata(g)
    stored = load(root / "zarr.json")
    assert stored["consolidated_metadata"] == expected_v3(root)
    assert sorted(stored["consolidated_metadata"]["metadata"]) == ["a", "sub", "sub/b"]
    assert g.metadata["consolidated_metadata"] == stored["consolidated_metadata"]

    g.attrs["title"] = "renamed"  # the group's own zarr.json is rewritten: the field stays
    a.resize(8)
    a.attrs["units"] = "s"
    client.open_group("local", "v3/sub").attrs["n"] = 2
    g.create_group("sub/deeper").create_array("c", shape=(2,), dtype="uint8")
    client.delete("local", "v3/sub/b")
    stored = load(root / "zarr.json")
    assert stored["attributes"] == {"title": "renamed"}
    got = stored["consolidated_metadata"]
    assert got == expected_v3(root)
    assert sorted(got["metadata"]) == ["a", "sub", "sub/deeper", "sub/deeper/c"]
    assert got["metadata"]["a"]["shape"] == [8]
    assert got["metadata"]["a"]["attributes"] == {"units": "s"}
    assert got["metadata"]["sub"]["attributes"] == {"n": 2}

    client.delete("local", "v3/sub")
    assert sorted(load(root / "zarr.json")["consolidated_metadata"]["metadata"]) == ["a"]


def test_zarrctl_consolidate_and_errors(client, server):
    zarr = pytest.importorskip("zarr")
    root = server.workdir / "data" / "plain"
    g = zarr.open_group(str(root), mode="w")
    g.attrs["k"] = 1
    g.create_dataset("x", shape=(2,), chunks=(2,), dtype="<i8")
    out = zarrctl(server.unix, "--json", "consolidate", "local:plain")
    reply = json.loads(out.stdout)
    assert reply["zarr_format"] == 2 and reply["key"] == "plain/.zmetadata"
    assert reply["entries"] == 3  # .zgroup, .zattrs, x/.zarray
    assert sorted(zarr.open_consolidated(str(root), mode="r").array_keys()) == ["x"]
    text = zarrctl(server.unix, "consolidate", "local:plain").stdout
    assert "consolidated 3 entries into plain/.zmetadata" in text

    with pytest.raises(zarrd.FailedPreconditionError):
        client.consolidate("local", "plain/x")
    with pytest.raises(zarrd.NotFoundError):
        client.consolidate("local", "nowhere")
    with pytest.raises(zarrd.PermissionDeniedError):
        client.consolidate("ro", "plain")
    assert zarrctl(server.unix, "consolidate", "local:nowhere", check=False).returncode != 0


def test_a_store_without_listing_lists_through_consolidated_metadata(tmp_path):
    """Plain HTTP has no listing: groups there are listed from their consolidated metadata, so
    the xarray backend opens a dataset xarray wrote."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    from zarrd.xarray_backend import ZarrdBackendEntrypoint
    data = tmp_path / "data"
    data.mkdir()
    values = np.arange(12.0).reshape(3, 4) + 1
    xr.Dataset({"t": (("y", "x"), values)}, coords={"x": np.arange(4) + 1},
               attrs={"title": "on the web"}).to_zarr(str(data / "ds"), mode="w")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(data))
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    s = Server(tmp_path, {"stores": [
        {"name": "web", "kind": "http", "url": f"http://127.0.0.1:{web.server_address[1]}"}]})
    try:
        with zarrd.connect(s.unix) as c:
            assert sorted(c.open_group("web", "ds").keys()) == ["t", "x"]
        got = xr.open_dataset("zarrd://web/ds", engine=ZarrdBackendEntrypoint, address=s.unix)
        assert got.attrs["title"] == "on the web"
        np.testing.assert_array_equal(got["t"].values, values)
        np.testing.assert_array_equal(got["x"].values, np.arange(4) + 1)
        # Nothing records the store's root: listing it says why it cannot.
        out = zarrctl(s.unix, "ls", "web:", check=False)
        assert out.returncode == 1 and "no listing" in out.stderr
    finally:
        web.shutdown()
        assert s.stop() == 0, s.log_text()[-3000:]
