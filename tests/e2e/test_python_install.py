"""The Python client installed the way Debian 12 allows: into a venv with
--system-site-packages (grpcio, protobuf and numpy from Debian), offline, then used from it
against a real zarrd."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).parents[2] / "client" / "python"


def test_installs_into_a_venv_and_reads_from_zarrd(server, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
    # A copy of the source: installing leaves build/ and *.egg-info beside it.
    src = tmp_path / "src"
    shutil.copytree(SOURCE, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = subprocess.run([venv / "bin" / "pip", "install", "--no-build-isolation", "--no-deps",
                              "--no-index", src], capture_output=True, text=True, env=env,
                             timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    values = np.arange(35 * 12, dtype="<i4").reshape(35, 12) * 3 - 100
    np.save(tmp_path / "values.npy", values)
    script = textwrap.dedent(f"""
        import importlib.metadata, json, sys
        import numpy as np, zarrd
        c = zarrd.connect({server.unix!r})
        a = c.create_array("local", "installed", shape=(35, 12), chunks=(8, 5), dtype="int32",
                           zarr_format=2)
        a[...] = np.load({str(tmp_path / "values.npy")!r})
        np.save({str(tmp_path / "back.npy")!r}, c.open_array("local", "installed")[30:2:-3, 1::4])
        points = importlib.metadata.entry_points(group="xarray.backends")
        print(json.dumps({{"file": zarrd.__file__, "backends": [p.value for p in points]}}))
    """)
    run = subprocess.run([venv / "bin" / "python", "-c", script], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    import json
    out = json.loads(run.stdout)
    assert out["file"].startswith(str(venv)), out
    assert "zarrd.xarray_backend:ZarrdBackendEntrypoint" in out["backends"]
    np.testing.assert_array_equal(np.load(tmp_path / "back.npy"), values[30:2:-3, 1::4])
    # zarr-python 2 reads what the installed client wrote.
    import zarr
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "data" / "installed"), mode="r")[...],
                                  values)
