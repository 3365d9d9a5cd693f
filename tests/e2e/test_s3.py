"""zarrd serving arrays from a real S3 server (s3rver from tests/s3, on 127.0.0.1) and from a
plain HTTP store: arrays written and read through zarrd, peer fixtures and zarr 2.13 arrays
uploaded with boto3 and read through zarrd, an array zarrd wrote downloaded and opened by zarr
2.13, and `zarrctl copy` between a local and an s3 store."""
import hashlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrd
from conftest import BUCKET, KEY, Server, upload, zarrctl

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("ZARRD_FIXTURES", ROOT / "tests/data/peers"))


@pytest.fixture
def served(s3, tmp_path):
    endpoint, _ = s3
    prefix = f"e2e/{tmp_path.name}"
    stores = [{"name": "local", "root": "data"},
              {"name": "s3", "kind": "s3", "endpoint": endpoint, "bucket": BUCKET,
               "prefix": prefix, "region": "us-east-1", "access_key_id": KEY,
               "secret_access_key": KEY, "http": {"backoff_base_ms": 5}},
              {"name": "web", "kind": "http", "url": f"{endpoint}/{BUCKET}/{prefix}"}]
    server = Server(tmp_path, {"stores": stores})
    yield server, prefix
    assert server.stop() == 0, server.exit_report()


def download(client, prefix, local_root):
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/")
    for page in pages:
        for obj in page.get("Contents", []):
            target = Path(local_root) / obj["Key"][len(prefix) + 1:]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(client.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read())


@pytest.mark.parametrize("kind", ["v3-zstd", "v3-sharded", "v2-blosc"])
def test_create_write_read_list_attrs_resize_delete(served, kind):
    server, _ = served
    kw = {"zarr_format": 2, "compressors": "blosc"} if kind == "v2-blosc" else {}
    if kind == "v3-sharded":
        kw.update(chunks=(8, 8), shards=(16, 24))
    else:
        kw.update(chunks=(16, 16))
    values = np.random.default_rng(1).integers(-1000, 1000, (50, 40)).astype("int32")
    with zarrd.connect(server.unix) as c:
        c.create_group("s3", "g", zarr_format=kw.get("zarr_format", 3))
        a = c.create_array("s3", "g/a", shape=(50, 40), dtype="int32", fill_value=-1, **kw)
        a[:] = values
        a[3:9, 5] = np.arange(6, dtype="int32")
        values[3:9, 5] = np.arange(6)
        b = c.open_array("s3", "g/a")
        np.testing.assert_array_equal(b[:], values)
        np.testing.assert_array_equal(b[7:33:3, ::-5], values[7:33:3, ::-5])
        assert sorted(c.open_group("s3", "g").keys()) == ["a"]
        b.attrs["units"] = "m/s"
        assert c.open_array("s3", "g/a").attrs["units"] == "m/s"
        b.resize(20, 40)
        b.resize(50, 40)
        grown = c.open_array("s3", "g/a")[:]
        np.testing.assert_array_equal(grown[:20], values[:20])
        assert (grown[20:] == -1).all()
        assert c.delete("s3", "g/a") > 0
        with pytest.raises(zarrd.errors.NotFoundError):
            c.open_array("s3", "g/a")


def test_zarr_213_arrays_uploaded_to_the_bucket_read_through_zarrd(s3, served, tmp_path):
    _, client = s3
    server, prefix = served
    values = np.random.default_rng(2).standard_normal((70, 30)).astype("<f8")
    z = zarr.open(str(tmp_path / "local.zarr"), mode="w", shape=values.shape, chunks=(16, 7),
                  dtype="<f8", fill_value=0.0)
    z[:] = values
    z.attrs["from"] = "zarr 2.13"
    upload(client, tmp_path / "local.zarr", f"{prefix}/up")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/.zgroup", Body=b'{"zarr_format": 2}')
    with zarrd.connect(server.unix) as c:
        a = c.open_array("s3", "up")
        np.testing.assert_array_equal(a[:], values)
        assert a.attrs["from"] == "zarr 2.13"
        # The same bytes over plain HTTP: opened by path, without listing.
        web = c.open_array("web", "up")
        np.testing.assert_array_equal(web[10:50, 3], values[10:50, 3])
        with pytest.raises(zarrd.errors.ZarrdError, match="no listing"):
            c.open_group("web", "").keys()


def test_an_array_zarrd_wrote_to_the_bucket_opens_in_zarr_213(s3, served, tmp_path):
    _, client = s3
    server, prefix = served
    values = np.arange(45 * 33, dtype="<i2").reshape(45, 33)
    with zarrd.connect(server.unix) as c:
        a = c.create_array("s3", "out", shape=values.shape, dtype="int16", chunks=(10, 10),
                           zarr_format=2, compressors="zstd")
        a[:] = values
    download(client, f"{prefix}/out", tmp_path / "down.zarr")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "down.zarr"), mode="r")[:], values)


def test_peer_fixtures_uploaded_to_the_bucket_read_as_tensorstore_read_them(s3, served):
    _, client = s3
    server, prefix = served
    expected = json.loads((FIXTURES / "expected-tensorstore.json").read_text())
    keys = sorted(k for k, v in expected.items()
                  if "error" not in v and k.startswith("zarrita/v3/data.zarr/"))
    assert len(keys) >= 5
    upload(client, FIXTURES / "zarrita/v3/data.zarr", f"{prefix}/peers")
    with zarrd.connect(server.unix) as c:
        for key in keys:
            want = expected[key]
            values = np.ascontiguousarray(c.open_array("s3", "peers/" + key.split("/data.zarr/")[1])[...])
            assert list(values.shape) == want["shape"], key
            le = values.astype(values.dtype.newbyteorder("<"))
            assert hashlib.sha256(le.tobytes()).hexdigest() == want["sha256_c_order_le"], key


def test_zarrctl_copy_from_local_to_s3_and_back(served, tmp_path):
    server, _ = served
    values = np.random.default_rng(3).integers(0, 255, (300, 64)).astype("uint8")
    with zarrd.connect(server.unix) as c:
        a = c.create_array("local", "src", shape=values.shape, dtype="uint8", chunks=(32, 32))
        a[:] = values
    out = zarrctl(server.unix, "copy", "local:src", "s3:copied")
    assert "chunks 20/20" in out.stderr, out.stderr
    zarrctl(server.unix, "copy", "s3:copied", "local:back")
    with zarrd.connect(server.unix) as c:
        np.testing.assert_array_equal(c.open_array("s3", "copied")[:], values)
        np.testing.assert_array_equal(c.open_array("local", "back")[:], values)


@pytest.mark.parametrize("store, message", [
    ({"name": "x", "kind": "s3"}, "stores[x].bucket is required"),
    ({"name": "x", "kind": "s3", "bucket": "b", "addressing": "sideways"},
     "stores[x].addressing must be"),
    ({"name": "x", "kind": "s3", "bucket": "b", "http": {"retries": 3}},
     "stores[x].http.retries is not a known setting"),
    ({"name": "x", "kind": "s3", "bucket": "b", "endpoint": "localhost:9000"},
     "must start with http(s)://"),
    ({"name": "x", "kind": "http"}, "stores[x].url is required"),
])
def test_bad_object_store_configs_are_refused_at_start(tmp_path, store, message):
    from conftest import ZARRD
    config = tmp_path / "zarrd.json"
    config.write_text(json.dumps({"stores": [store], "listen": ["unix:zarrd.sock"]}))
    proc = subprocess.run([*ZARRD, "--config", str(config)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr, proc.stdout + proc.stderr
