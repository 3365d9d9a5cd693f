"""Starts a real zarrd (fork + exec) on a Unix socket and a loopback TCP port."""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

# As the zarrd package sets it, but grpc is imported here first: forked children make channels.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "1")

import grpc  # noqa: E402
import pytest  # noqa: E402

# Commands, split like a shell would (the GPU machine runs them through a bundle's `run`).
ZARRD = shlex.split(os.environ.get("ZARRD_BIN", ""))
ZARRCTL = shlex.split(os.environ.get("ZARRCTL_BIN", ""))
# A real S3 server for the object-store tests: s3rver, installed by `npm ci` in tests/s3.
S3RVER = Path(__file__).resolve().parents[2] / "tests/s3/node_modules/s3rver/bin/s3rver.js"
BUCKET = "zarrd-e2e"
KEY = "S3RVER"  # s3rver's built-in access key and secret


class Server:
    def __init__(self, workdir, extra_config=None):
        self.workdir = Path(workdir)
        self.socket = self.workdir / "zarrd.sock"
        config = {
            "stores": [{"name": "local", "root": "data"},
                       {"name": "mem", "kind": "memory"},
                       {"name": "ro", "root": "data", "read_only": True}],
            "listen": ["unix:zarrd.sock", "127.0.0.1:0"],
            "metrics_listen": "127.0.0.1:0",
            "log_level": "debug",
            "shutdown_grace_seconds": 20,
        }
        config.update(extra_config or {})
        (self.workdir / "zarrd.json").write_text(json.dumps(config))
        self.log = open(self.workdir / "zarrd.log", "w+")
        self.proc = subprocess.Popen([*ZARRD, "--config", str(self.workdir / "zarrd.json")],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            text = Path(self.log.name).read_text()
            if "ready" in text:
                self.tcp = re.search(r"listening on (127\.0\.0\.1:\d+)", text).group(1)
                break
            if self.proc.poll() is not None:
                raise RuntimeError("zarrd exited:\n" + text)
            time.sleep(0.05)
        else:
            raise RuntimeError("zarrd did not start:\n" + Path(self.log.name).read_text())
        self.unix = f"unix:{self.socket}"

    def log_text(self):
        return Path(self.log.name).read_text()

    def exit_report(self):
        """What to show when zarrd stopped badly: a sanitizer's or the C library's report from its
        first line (the tail alone cuts the error off a long ASan stack), else the log's tail."""
        text = self.log_text()
        starts = [text.find(m) for m in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                         "runtime error:", "Fatal glibc error", "terminate called")]
        starts = [i for i in starts if i >= 0]
        return text[min(starts):][:8000] if starts else text[-3000:]

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)


@pytest.fixture
def server(tmp_path):
    if not ZARRD:
        pytest.fail("ZARRD_BIN is not set (run through ctest)")
    s = Server(tmp_path)
    yield s
    # Non-zero also when a sanitizer build found a leak or an error at exit.
    assert s.stop() == 0, s.exit_report()


@pytest.fixture
def stub(server):
    from zarrd.v1 import zarrd_pb2_grpc
    channel = grpc.insecure_channel(server.unix, options=[
        ("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)])
    yield zarrd_pb2_grpc.ZarrdStub(channel)
    channel.close()


def zarrctl(address, *args, check=True):
    proc = subprocess.run([*ZARRCTL, "--address", address, *map(str, args)], capture_output=True,
                          text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"zarrctl {args} exited {proc.returncode}: {proc.stderr}")
    return proc


def sel(*items):
    """A wire selection from Python index items (ints, slices, Ellipsis)."""
    from zarrd.v1 import zarrd_pb2 as pb
    out = pb.Selection()
    for it in items:
        if it is Ellipsis:
            out.items.add(ellipsis=True)
        elif isinstance(it, slice):
            s = out.items.add().slice
            for field in ("start", "stop", "step"):
                if getattr(it, field) is not None:
                    setattr(s, field, getattr(it, field))
        else:
            out.items.add(index=it)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    if not S3RVER.exists():
        pytest.skip(f"no s3rver at {S3RVER} (run `npm ci` in tests/s3, as scripts/dev does)")
    boto3 = pytest.importorskip("boto3", reason="needs Debian's python3-boto3")
    port = free_port()
    # s3rver's continuation tokens use a cipher that OpenSSL 3 keeps in its legacy provider.
    proc = subprocess.Popen(["node", "--openssl-legacy-provider", str(S3RVER), "-d", str(tmp_path_factory.mktemp("s3rver")),
                             "-a", "127.0.0.1", "-p", str(port), "--silent",
                             "--configure-bucket", BUCKET],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("s3rver did not start")
            time.sleep(0.1)
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY,
                          aws_secret_access_key=KEY, region_name="us-east-1")
    yield endpoint, client
    proc.terminate()
    proc.wait(timeout=10)


def upload(client, local_root, prefix):
    for path in Path(local_root).rglob("*"):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(local_root).as_posix()}"
            client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())
