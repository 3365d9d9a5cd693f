"""Shared helpers: run zarrd-engine-tool, locate the peer fixtures."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

TOOL = os.environ.get("ZARRD_ENGINE_TOOL", "")
FIXTURES = Path(os.environ.get("ZARRD_FIXTURES",
                               Path(__file__).resolve().parents[1] / "data" / "peers"))


class ToolError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def run_tool(*args):
    if not TOOL:
        pytest.fail("ZARRD_ENGINE_TOOL is not set (run through ctest)")
    proc = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        code = proc.stderr.split(":", 1)[0].strip()
        raise ToolError(code, proc.stderr.strip())
    return proc.stdout


def zarrd_read(root, path, selection, tmp_path):
    """Reads through zarrd's engine; returns a numpy array with the result's dtype and shape."""
    out = Path(tmp_path) / "read.bin"
    header = json.loads(run_tool("read", root, path, selection, out))
    dtype = np.dtype(header["numpy_dtype"]).newbyteorder("<")
    return np.frombuffer(out.read_bytes(), dtype=dtype).reshape(header["shape"])


def zarrd_write(root, path, selection, values, tmp_path):
    src = Path(tmp_path) / "write.bin"
    arr = np.ascontiguousarray(values)
    src.write_bytes(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
    run_tool("write", root, path, selection, src)


def zarrd_create(root, path, document, tmp_path):
    meta = Path(tmp_path) / "meta.json"
    meta.write_text(json.dumps(document))
    return json.loads(run_tool("create", root, path, meta))
