"""xarray on Dask distributed over a zarrd on every "node": two zarrd processes (each its own
socket) serve one S3 bucket (s3rver on loopback), two worker processes are each bound to one of them by $ZARRD_ADDRESS,
and a reduction of a dataset written by Debian's xarray + zarr, opened with engine="zarrd" and
chunks={}, equals numpy's; each zarrd's metrics show it served part of the reads."""
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from conftest import BUCKET, KEY, ZARRD, Server, upload
from test_metrics import get, scrape

distributed = pytest.importorskip("distributed", reason="needs Dask distributed (python3-distributed)")
zarr = pytest.importorskip("zarr", reason="Debian's zarr writes the dataset")

PYPROJECT = Path(__file__).resolve().parents[2] / "client" / "python" / "pyproject.toml"


@pytest.fixture
def shared_store(s3, tmp_path):
    """The bucket both zarrds serve (s3rver on loopback), as zarrd's config names it, and the
    boto3 client that fills it."""
    endpoint, client = s3
    return {"name": "shared", "kind": "s3", "endpoint": endpoint, "bucket": BUCKET,
            "prefix": f"dask/{tmp_path.name}", "region": "us-east-1", "access_key_id": KEY,
            "secret_access_key": KEY}, client


def put_dataset(store, client, name, ds, encoding, staging):
    """Writes `ds` with Debian's xarray + zarr 2.13 into a local folder, then uploads it into the
    bucket of `store` (a store config) at `name`."""
    ds.to_zarr(str(staging), mode="w", encoding=encoding)
    upload(client, staging, f"{store['prefix']}/{name}")


@pytest.fixture
def zarrd_engine(tmp_path, monkeypatch):
    """engine="zarrd" as `pip install client/python` registers it: the package's entry point,
    read from its pyproject.toml, in a dist-info directory on sys.path."""
    from xarray.backends import plugins
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    dist = tmp_path / "site" / "zarrd-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zarrd\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
        for group, eps in entry_points.items()))
    monkeypatch.syspath_prepend(str(dist.parent))
    plugins.list_engines.cache_clear()
    yield
    plugins.list_engines.cache_clear()


def test_reduction_on_two_workers_each_bound_to_its_zarrd(tmp_path, shared_store, zarrd_engine,
                                                         monkeypatch):
    if not ZARRD:
        pytest.fail("ZARRD_BIN is not set (run through ctest)")
    rng = np.random.default_rng(5)
    values = rng.standard_normal((48, 60, 40))
    counts = rng.integers(0, 1000, (48, 60)).astype("int64")
    ds = xr.Dataset({"temp": (("time", "lat", "lon"), values), "count": (("time", "lat"), counts)},
                    coords={"time": np.arange(48), "lat": np.linspace(-60, 60, 60),
                            "lon": np.linspace(0, 351, 40)})
    store, s3_client = shared_store
    put_dataset(store, s3_client, "ds", ds,
                {"temp": {"chunks": (6, 30, 20)}, "count": {"chunks": (6, 30)}}, tmp_path / "staging")

    nodes = []
    for i in range(2):
        (tmp_path / f"node{i}").mkdir()
        nodes.append(Server(tmp_path / f"node{i}", {"stores": [store], "log_level": "info"}))
    try:
        urls = [n.log_text().split("metrics on ")[1].split()[0] for n in nodes]
        before = [scrape(u) for u in urls]
        from distributed import Client, Nanny, Scheduler, SpecCluster
        # LocalCluster's parts (a scheduler and nannies on loopback), with each worker's own env.
        workers = {f"node{i}": {"cls": Nanny, "options": {
            "nthreads": 2, "host": "127.0.0.1", "local_directory": str(tmp_path / "dask"),
            "env": {"ZARRD_ADDRESS": n.unix}}}
            for i, n in enumerate(nodes)}
        scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
        with SpecCluster(workers=workers, scheduler=scheduler, silence_logs=40) as cluster, \
                Client(cluster, timeout=60) as dask_client:
            dask_client.wait_for_workers(2, timeout=60)
            # This process reads the metadata (and the coordinates) from node 0's zarrd.
            monkeypatch.setenv("ZARRD_ADDRESS", nodes[0].unix)
            got = xr.open_dataset("zarrd://shared/ds", engine="zarrd", chunks={})
            assert got["temp"].chunks == ((6,) * 8, (30, 30), (20, 20))
            mean = got["temp"].mean(dim=("lat", "lon")).compute()
            total = got["count"].sum().compute()
            # The addresses of the clients each worker made (a lambda: pickled by value).
            bound = dask_client.run(lambda: sorted({k[0] for k in sys.modules["zarrd.client"]._shared}))
            got.close()
        np.testing.assert_allclose(mean.values, values.mean(axis=(1, 2)), rtol=1e-12)
        assert int(total) == int(counts.sum())
        # Each worker read through its own node's zarrd only.
        assert sorted(bound.values()) == [[nodes[0].unix], [nodes[1].unix]], bound

        after = [scrape(u) for u in urls]
        served = [get(a, "zarrd_read_bytes_total", prototype="host") -
                  get(b, "zarrd_read_bytes_total", prototype="host") for a, b in zip(after, before)]
        chunks = [get(a, "zarrd_chunks_total", op="decoded") - get(b, "zarrd_chunks_total", op="decoded")
                  for a, b in zip(after, before)]
        print(f"read bytes by node: {served}, chunks decoded: {chunks}", file=sys.stderr)
        assert all(s > 0 for s in served) and all(c > 0 for c in chunks), (served, chunks)
        data_bytes = values.nbytes + counts.nbytes
        assert data_bytes <= sum(served) <= data_bytes + 2 * 48 * 8 + 60 * 8 + 40 * 8 + 1024
    finally:
        for n in nodes:
            n.stop()
