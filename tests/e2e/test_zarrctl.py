"""zarrctl (and through it the C++ client) against a real zarrd, on the Unix socket and TCP."""
import json
import subprocess
import threading

import numpy as np
import pytest

from conftest import ZARRCTL, zarrctl

CODECS = ["none", "zstd", "blosc", "gzip"]


@pytest.mark.parametrize("transport", ["unix", "tcp"])
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("store", ["local", "mem"])
def test_create_put_get_across_codecs(server, tmp_path, transport, fmt, store):
    address = server.unix if transport == "unix" else server.tcp
    rng = np.random.default_rng(fmt)
    for codec in CODECS:
        path = f"g{fmt}/{codec}"
        zarrctl(address, "create", f"{store}:{path}", "--shape", "37,23,5", "--chunks", "8,7,2",
                "--dtype", "int16", "--codec", codec, "--zarr-format", fmt, "--fill-value", "-1")
        values = rng.integers(-1000, 1000, (37, 23, 5), dtype="<i2")
        np.save(tmp_path / "in.npy", values)
        zarrctl(address, "put", f"{store}:{path}", "-i", tmp_path / "in.npy")
        for sel in ["", "3, ::-2", "30:2:-4, 1:20:3, -1", "..., 1"]:
            zarrctl(address, "get", f"{store}:{path}", sel, "-o", tmp_path / "out.npy")
            np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), eval(f"values[{sel or '...'}]"),
                                          err_msg=f"{codec} {sel}")
        # A partial put into a stepped selection, checked against numpy.
        patch = np.full((5, 6, 5), 7, dtype="<i2")
        np.save(tmp_path / "patch.npy", patch)
        zarrctl(address, "put", f"{store}:{path}", "2:37:7, ::4", "-i", tmp_path / "patch.npy")
        values[2:37:7, ::4] = patch
        zarrctl(address, "get", f"{store}:{path}", "", "-o", tmp_path / "out.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), values)
    listing = zarrctl(address, "ls", f"{store}:g{fmt}").stdout.split("\n")
    assert sorted(line.split()[-1] for line in listing if line) == sorted(CODECS)


def test_v2_arrays_written_by_zarrd_open_in_zarr_python(server, tmp_path):
    import zarr
    zarrctl(server.unix, "create", "local:v2a", "--shape", "10,12", "--chunks", "4,5",
            "--dtype", "float64", "--codec", "blosc", "--zarr-format", "2")
    values = np.linspace(0, 1, 120).reshape(10, 12)
    np.save(tmp_path / "v.npy", values)
    zarrctl(server.unix, "put", "local:v2a", "-i", tmp_path / "v.npy")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "data" / "v2a"), mode="r")[...], values)


def test_bad_requests_exit_1_with_the_code_and_write_nothing(server, tmp_path):
    zarrctl(server.unix, "create", "local:a", "--shape", "10", "--dtype", "float32")
    cases = [
        (["get", "local:missing", "-o", tmp_path / "x.npy"], "NOT_FOUND"),
        (["get", "local:a", "10", "-o", tmp_path / "x.npy"], "OUT_OF_RANGE"),
        (["get", "local:a", "::0", "-o", tmp_path / "x.npy"], "INVALID_ARGUMENT"),
        (["create", "local:a", "--shape", "10"], "ALREADY_EXISTS"),
        (["create", "local:b", "--shape", "10", "--dtype", "string"], "INVALID_ARGUMENT"),
        (["create", "ro:c", "--shape", "10"], "PERMISSION_DENIED"),
        (["rm", "local:nothing"], "NOT_FOUND"),
    ]
    np.save(tmp_path / "wrong_dtype.npy", np.zeros(10, dtype="<f8"))
    np.save(tmp_path / "wrong_size.npy", np.zeros(11, dtype="<f4"))
    cases += [(["put", "local:a", "-i", tmp_path / "wrong_dtype.npy"], "INVALID_ARGUMENT"),
              (["put", "local:a", "-i", tmp_path / "wrong_size.npy"], "INVALID_ARGUMENT")]
    (tmp_path / "bad.json").write_text('{"zarr_format": 3, "node_type": "array", "shape": [-4]}')
    cases.append((["create", "local:d", "--metadata", tmp_path / "bad.json"], "INVALID_ARGUMENT"))
    for args, code in cases:
        proc = zarrctl(server.unix, *args, check=False)
        assert proc.returncode == 1, (args, proc.stderr)
        assert f"zarrctl: {code}:" in proc.stderr, (args, proc.stderr)
    assert zarrctl(server.unix, "bogus", check=False).returncode == 2
    assert zarrctl("unix:/nonexistent.sock", "info", check=False).returncode == 1
    # Nothing was written: only a's metadata is in the store, and a still reads as fill.
    listing = zarrctl(server.unix, "ls", "local:").stdout.split()
    assert listing == ["array", "v3", "a"]
    assert sorted(p.name for p in (tmp_path / "data" / "a").iterdir()) == ["zarr.json"]


def test_streamed_result_of_hundreds_of_mib(server, tmp_path):
    # 8192 x 8192 float32 = 256 MiB: streamed both ways in 4 MiB pieces.
    n = 8192
    zarrctl(server.unix, "create", "local:big", "--shape", f"{n},{n}", "--chunks", "1024,1024",
            "--dtype", "float32", "--codec", "zstd")
    values = (np.arange(n * n, dtype="<u4") % 65521).astype("<f4").reshape(n, n)
    np.save(tmp_path / "big.npy", values)
    zarrctl(server.unix, "put", "local:big", "-i", tmp_path / "big.npy")
    zarrctl(server.unix, "get", "local:big", "", "-o", tmp_path / "back.npy")
    back = np.load(tmp_path / "back.npy", mmap_mode="r")
    assert back.shape == (n, n)
    assert np.array_equal(back, values)
    zarrctl(server.unix, "get", "local:big", "::-3, 100:8000:5", "-o", tmp_path / "part.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "part.npy"), values[::-3, 100:8000:5])
    zarrctl(server.unix, "copy", "local:big", "mem:copy")
    zarrctl(server.unix, "get", "mem:copy", "4095", "-o", tmp_path / "row.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "row.npy"), values[4095])


def test_concurrent_clients_write_disjoint_parts_of_shared_chunks(server, tmp_path):
    zarrctl(server.tcp, "create", "local:c", "--shape", "16,64", "--chunks", "16,64",
            "--dtype", "int32", "--codec", "zstd")
    procs = []
    for t in range(16):
        block = np.arange(16 * 4, dtype="<i4").reshape(16, 4) + 1000 * t + 1
        np.save(tmp_path / f"block{t}.npy", block)
        addr = server.tcp if t % 2 else server.unix
        procs.append(subprocess.Popen([*ZARRCTL, "--address", addr, "put", "local:c",
                                       f":, {t}::16", "-i", tmp_path / f"block{t}.npy"],
                                      stderr=subprocess.PIPE))
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    zarrctl(server.unix, "get", "local:c", "", "-o", tmp_path / "all.npy")
    got = np.load(tmp_path / "all.npy")
    for t in range(16):
        np.testing.assert_array_equal(got[:, t::16], np.arange(64, dtype="<i4").reshape(16, 4) + 1000 * t + 1)


def test_attrs_and_rm(server):
    zarrctl(server.unix, "mkgroup", "local:grp", "--zarr-format", "2")
    zarrctl(server.unix, "create", "local:grp/x", "--shape", "4", "--zarr-format", "2")
    out = zarrctl(server.unix, "attrs", "local:grp/x", "--set", '{"units": "m", "n": [1, 2]}').stdout
    assert json.loads(out) == {"units": "m", "n": [1, 2]}
    assert json.loads(zarrctl(server.unix, "attrs", "local:grp/x").stdout)["units"] == "m"
    assert "array v2 x" in zarrctl(server.unix, "ls", "local:grp").stdout
    zarrctl(server.unix, "rm", "local:grp")
    assert zarrctl(server.unix, "info", "local:grp/x", check=False).returncode == 1


@pytest.mark.parametrize("codecs", [
    [{"name": "transpose", "configuration": {"order": [1, 0]}},
     {"name": "bytes", "configuration": {"endian": "big"}},
     {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 8}}],
    [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 4],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "start"}}],
    [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}},
     {"name": "crc32c"}],
], ids=["transpose-bigendian-blosc", "sharded-zstd-crc32c", "gzip-crc32c"])
def test_v3_codec_pipelines_through_the_service(server, tmp_path, codecs):
    meta = {"zarr_format": 3, "node_type": "array", "shape": [23, 17], "data_type": "float64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 8]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN", "codecs": codecs,
            "dimension_names": ["y", "x"]}
    (tmp_path / "m.json").write_text(json.dumps(meta))
    zarrctl(server.unix, "create", "local:p", "--metadata", tmp_path / "m.json")
    values = np.random.default_rng(5).standard_normal((23, 17))
    values[0:10, 0:8] = np.nan  # one chunk (or inner chunks) of fill: not stored
    np.save(tmp_path / "v.npy", values)
    zarrctl(server.unix, "put", "local:p", "-i", tmp_path / "v.npy")
    for sel in ["", "::-2, 3", "20:1:-3, 16:0:-5"]:
        zarrctl(server.unix, "get", "local:p", sel, "-o", tmp_path / "o.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), eval(f"values[{sel or '...'}]"))
    info = json.loads(zarrctl(server.unix, "info", "local:p").stdout)
    assert info["dimension_names"] == ["y", "x"] and info["codecs"][0]["name"] == codecs[0]["name"]


def test_orthogonal_point_and_block_selections(server, tmp_path):
    values = np.random.default_rng(9).integers(-1000, 1000, (13, 9), dtype="<i4")
    np.save(tmp_path / "in.npy", values)
    zarrctl(server.unix, "create", "local:sel", "--shape", "13,9", "--chunks", "4,4",
            "--dtype", "int32", "--codec", "zstd")
    zarrctl(server.unix, "put", "local:sel", "-i", tmp_path / "in.npy")
    out = tmp_path / "out.npy"
    zarrctl(server.unix, "get", "local:sel", "[12, 0, -1, 0], 1:8:3", "-o", out)
    np.testing.assert_array_equal(np.load(out), values[[12, 0, -1, 0]][:, 1:8:3])
    zarrctl(server.unix, "get", "local:sel", "[2], [8, -9, 8]", "-o", out)
    np.testing.assert_array_equal(np.load(out), values[np.ix_([2], [8, -9, 8])])
    zarrctl(server.unix, "get", "local:sel", "--points", "[0, 5, 12], [3, 3, -1]", "-o", out)
    np.testing.assert_array_equal(np.load(out), values[[0, 5, 12], [3, 3, -1]])
    zarrctl(server.unix, "get", "local:sel", "--blocks", "-1, 0:2", "-o", out)
    np.testing.assert_array_equal(np.load(out), values[12:13, 0:8])
    bad = zarrctl(server.unix, "get", "local:sel", "[13], :", "-o", out, check=False)
    assert bad.returncode == 1 and "index 13 is out of bounds for axis 0 with size 13" in bad.stderr
    # Writes: orthogonal, then points.
    np.save(tmp_path / "patch.npy", np.array([[1, 2], [3, 4]], dtype="<i4"))
    zarrctl(server.unix, "put", "local:sel", "[5, 1], [0, 8]", "-i", tmp_path / "patch.npy")
    values[np.ix_([5, 1], [0, 8])] = [[1, 2], [3, 4]]
    np.save(tmp_path / "patch.npy", np.array([-5, -6], dtype="<i4"))
    zarrctl(server.unix, "put", "local:sel", "--points", "[7, 8], [7, 8]", "-i",
            tmp_path / "patch.npy")
    values[[7, 8], [7, 8]] = [-5, -6]
    zarrctl(server.unix, "get", "local:sel", "", "-o", out)
    np.testing.assert_array_equal(np.load(out), values)
