"""What the hardening tests share: a process's memory, a folder's contents, array metadata."""
import hashlib
import os
from pathlib import Path


# Under AddressSanitizer freed memory sits in quarantine, so memory figures are printed only.
SANITIZED = os.environ.get("ZARRD_SANITIZED") == "1"


def near_idle(now, idle):
    """Back to idle: not more than 10 % above it (below is fine: the allocator gave back more)."""
    return SANITIZED or now <= idle * 1.10


def rss_bytes(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def tree_snapshot(root):
    """{relative path: sha256 of the file, or 'link -> target'}, without following links."""
    out = {}
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link -> " + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


ZSTD = [{"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 1}}]


def v3_array(shape, chunks, dtype="int32", fill=0, codecs=ZSTD):
    """zarr.json of a v3 array, as CreateNode's metadata_json takes it."""
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs}
