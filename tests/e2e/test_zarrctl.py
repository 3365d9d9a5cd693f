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


def test_creating_a_node_creates_its_parent_groups_as_zarr_python_does(server, tmp_path):
    import zarr
    zarrctl(server.unix, "create", "local:demo/deep/t", "--shape", "6", "--chunks", "4",
            "--dtype", "int32", "--zarr-format", "2")
    np.save(tmp_path / "v.npy", np.arange(6, dtype="<i4"))
    zarrctl(server.unix, "put", "local:demo/deep/t", "-i", tmp_path / "v.npy")
    root = zarr.open_group(str(tmp_path / "data"), mode="r")  # zarr 2.13 walks down from the root
    assert list(root.group_keys()) == ["demo"]
    assert list(root["demo"].group_keys()) == ["deep"]
    np.testing.assert_array_equal(root["demo/deep"]["t"][:], np.arange(6))
    assert json.loads(zarrctl(server.unix, "info", "local:demo").stdout) == {"zarr_format": 2}
    # v3: zarr.json group documents; an existing v2 parent is kept as it is.
    zarrctl(server.unix, "create", "local:demo/v3/u", "--shape", "3", "--zarr-format", "3")
    doc = json.loads((tmp_path / "data" / "demo" / "v3" / "zarr.json").read_text())
    assert doc == {"zarr_format": 3, "node_type": "group", "attributes": {}}
    assert (tmp_path / "data" / "demo" / ".zgroup").exists()
    assert not (tmp_path / "data" / "demo" / "zarr.json").exists()
    zarrctl(server.unix, "mkgroup", "local:g/h/i")
    assert json.loads(zarrctl(server.unix, "info", "local:g/h").stdout)["node_type"] == "group"
    refused = zarrctl(server.unix, "create", "local:demo/deep/t/x", "--shape", "3", check=False)
    assert refused.returncode == 1 and "FAILED_PRECONDITION" in refused.stderr


def test_bad_requests_exit_1_with_the_code_and_write_nothing(server, tmp_path):
    zarrctl(server.unix, "create", "local:a", "--shape", "10", "--dtype", "float32")
    cases = [
        (["get", "local:missing", "-o", tmp_path / "x.npy"], "NOT_FOUND"),
        (["get", "local:a", "10", "-o", tmp_path / "x.npy"], "OUT_OF_RANGE"),
        (["get", "local:a", "::0", "-o", tmp_path / "x.npy"], "INVALID_ARGUMENT"),
        (["create", "local:a", "--shape", "10"], "ALREADY_EXISTS"),
        (["create", "local:b", "--shape", "10", "--dtype", "int128"], "INVALID_ARGUMENT"),
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


COMMANDS = ["info", "ls", "create", "mkgroup", "get", "put", "copy", "rm", "attrs", "health"]


def run_zarrctl(*args):
    return subprocess.run([*ZARRCTL, *map(str, args)], capture_output=True, text=True, timeout=60)


def test_help_on_the_program_and_every_command():
    top = run_zarrctl("--help")
    assert top.returncode == 0, top.stderr
    for word in ["--address", "--json", "--tls-ca", "Example:", *COMMANDS]:
        assert word in top.stdout, word
    options = {"create": ["--shape", "--chunks", "--dtype", "--codec", "--fill-value",
                          "--zarr-format", "--overwrite", "--metadata"],
               "get": ["-o,--output", "selection", "--gpu"], "put": ["-i,--input", "selection"],
               "copy": ["destination", "--overwrite"], "attrs": ["--set"],
               "mkgroup": ["--zarr-format"], "health": ["--timeout"]}
    for command in COMMANDS:
        for args in ([command, "--help"], ["--help", command], [command, "-h"]):
            out = run_zarrctl(*args)
            assert out.returncode == 0, (args, out.stderr)
            assert f"zarrctl {command}" in out.stdout and "Example:" in out.stdout, (args, out.stdout)
            for option in options.get(command, []):
                assert option in out.stdout, (command, option)


def test_usage_errors_exit_2_and_reach_no_server(server, tmp_path):
    cases = [
        (["create", "local:a", "--shape", "10", "--chunk", "5"], "--chunk"),
        (["create", "local:a", "--shape", "10x"], "10x"),
        (["create", "local:a", "--shape", "10,-1"], "10,-1"),
        (["create", "local:a", "--shape", "10", "--chunks", "1.5"], "1.5"),
        (["create", "local:a", "--shape", "10", "--zarr-format", "4"], "--zarr-format"),
        (["create", "local:a", "--shape", "10", "--zarr-format", "two"], "--zarr-format"),
        (["create", "local:a", "--shape", "10", "--codec", "lz9"], "zstd,blosc,gzip,none"),
        (["create", "local:a"], "--shape"),
        (["create"], "node"),
        (["ls"], "node"),
        (["ls", "local:", "local:x"], "local:x"),
        (["rm", "local:a", "--force"], "--force"),
        (["get", "local:a", "", "extra", "-o", tmp_path / "x.npy"], "extra"),
        (["get", "local:a"], "-o"),
        (["put", "local:a"], "--input"),
        (["copy", "local:a"], "destination"),
        (["health", "--timeout", "abc"], "abc"),
        (["health", "--timeout", "0"], "--timeout"),
        (["--prototype", "gpu", "info"], "--prototype"),
        (["--tls-cert", tmp_path / "x.npy", "info"], "--tls-"),
        (["frobnicate"], "unknown command \"frobnicate\""),
        ([], "command"),
    ]
    (tmp_path / "x.npy").write_bytes(b"")
    for args, needle in cases:
        proc = zarrctl(server.unix, *args, check=False)
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
        assert proc.stderr.startswith("zarrctl: ") and needle in proc.stderr, (args, proc.stderr)
        assert proc.stdout == "", (args, proc.stdout)
    assert not (tmp_path / "data" / "a").exists()
    # Global options also after the command, and a selection that looks like a negative number.
    zarrctl(server.unix, "create", "local:a", "--shape", "4", "--dtype", "int8")
    np.save(tmp_path / "v.npy", np.arange(4, dtype="i1"))
    zarrctl(server.unix, "put", "local:a", "-i", tmp_path / "v.npy")
    proc = subprocess.run([*ZARRCTL, "get", "local:a", "-1", "-o", tmp_path / "o.npy", "--address",
                           server.unix], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert np.load(tmp_path / "o.npy") == 3


def test_json_output_matches_the_server(server, tmp_path):
    import zarr
    zarrctl(server.unix, "mkgroup", "local:g")
    zarrctl(server.unix, "create", "local:g/t", "--shape", "30,20", "--chunks", "7,6",
            "--dtype", "uint16", "--fill-value", "3")
    zarrctl(server.unix, "create", "local:g/v2", "--shape", "5", "--zarr-format", "2",
            "--codec", "gzip")
    zarrctl(server.unix, "attrs", "local:g/v2", "--set", '{"units": "K"}')
    values = np.arange(600, dtype="<u2").reshape(30, 20)
    np.save(tmp_path / "t.npy", values)
    put = zarrctl(server.unix, "--json", "put", "local:g/t", "-i", tmp_path / "t.npy").stdout
    assert json.loads(put) == {"store": "local", "path": "g/t", "nbytes": values.nbytes}

    info = json.loads(zarrctl(server.unix, "info", "--json").stdout)
    assert [(s["name"], s["kind"], s["read_only"]) for s in info["stores"]] == [
        ("local", "local", False), ("mem", "memory", False), ("ro", "local", True)]
    assert info["version"] == zarrctl(server.unix, "--version").stdout.split()[1]

    # A node's info against the files zarr-python reads from the store's folder.
    node = json.loads(zarrctl(server.unix, "info", "local:g/t", "--json").stdout)
    on_disk = json.loads((tmp_path / "data" / "g" / "t" / "zarr.json").read_text())
    assert node["metadata"] == on_disk
    assert (node["node_type"], node["zarr_format"], node["data_type"]) == ("array", 3, "uint16")
    assert (node["shape"], node["chunks"]) == ([30, 20], [7, 6])
    v2 = json.loads(zarrctl(server.unix, "--json", "info", "local:g/v2").stdout)
    z = zarr.open_array(str(tmp_path / "data" / "g" / "v2"), mode="r")
    assert v2["attributes"] == dict(z.attrs) == {"units": "K"}
    assert (v2["zarr_format"], tuple(v2["shape"]), v2["metadata"]["compressor"]) == (
        2, z.shape, z.compressor.get_config())

    listing = json.loads(zarrctl(server.unix, "ls", "local:g", "--json").stdout)
    assert sorted((e["name"], e["node_type"], e["zarr_format"]) for e in listing) == [
        ("t", "array", 3), ("v2", "array", 2)]
    assert sorted(e["name"] for e in listing) == sorted(
        p.name for p in (tmp_path / "data" / "g").iterdir() if p.is_dir())

    got = json.loads(zarrctl(server.unix, "--json", "get", "local:g/t", "::-4, 3",
                             "-o", tmp_path / "o.npy").stdout)
    expected = values[::-4, 3]
    assert np.array_equal(np.load(tmp_path / "o.npy"), expected)
    assert got == {"store": "local", "path": "g/t", "selection": "::-4, 3", "data_type": "uint16",
                   "shape": list(expected.shape), "nbytes": expected.nbytes,
                   "file": str(tmp_path / "o.npy")}

    assert json.loads(zarrctl(server.unix, "--json", "health").stdout) == {"serving": True}
    keys = [p for p in (tmp_path / "data" / "g" / "v2").rglob("*") if p.is_file()]
    rm = json.loads(zarrctl(server.unix, "--json", "rm", "local:g/v2").stdout)
    assert rm == {"store": "local", "path": "g/v2", "deleted_keys": len(keys)}


def test_default_compressors_are_zarr_python_s_and_the_python_client_s(server, tmp_path):
    import numcodecs
    from zarrd.metadata import array_metadata
    # zarr-python 3 writes v3 arrays with zstd level 0 and no checksum by default.
    zarr_python_3_default = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
    # v2: numcodecs' configurations (zstd at zarr-python 3's level 0).
    v2 = {"zstd": numcodecs.Zstd(level=0).get_config(), "gzip": numcodecs.GZip().get_config(),
          "blosc": numcodecs.Blosc().get_config(), "none": None}
    for fmt in (2, 3):
        for codec in [None, "zstd", "gzip", "blosc", "none"]:
            path = f"d{fmt}/{codec}"
            args = ["--codec", codec] if codec else []
            zarrctl(server.unix, "create", f"local:{path}", "--shape", "6,4", "--dtype", "float32",
                    "--zarr-format", fmt, *args)
            meta = json.loads(zarrctl(server.unix, "info", f"local:{path}").stdout)
            ours, _ = array_metadata((6, 4), "float32", compressors=codec or "default",
                                     zarr_format=fmt)
            if fmt == 2:
                assert meta["compressor"] == v2[codec or "zstd"] == ours["compressor"], codec
            else:
                assert meta["codecs"] == ours["codecs"], codec
                if codec in (None, "zstd"):
                    assert meta["codecs"][1] == zarr_python_3_default


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
