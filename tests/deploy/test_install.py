"""`cmake --install` into a temporary prefix, then zarrd started exactly as the installed unit's
ExecStart says, with systemd's readiness protocol; `systemd-analyze verify` on the unit."""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

BUILD = os.environ["ZARRD_BUILD_DIR"]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", BUILD, "--prefix", str(p)], check=True,
                   capture_output=True, text=True)
    return p


def unit_value(unit, key):
    return [line.split("=", 1)[1] for line in unit.read_text().splitlines() if line.startswith(key + "=")]


def test_unit_points_at_the_installed_files_and_verifies(prefix):
    unit = prefix / "lib/systemd/system/zarrd.service"
    exec_start = shlex.split(unit_value(unit, "ExecStart")[0])
    assert exec_start == [str(prefix / "bin/zarrd"), "--config", str(prefix / "etc/zarrd/zarrd.json")]
    assert os.access(exec_start[0], os.X_OK)
    assert unit_value(unit, "Type") == ["notify"] and unit_value(unit, "Restart") == ["on-failure"]
    assert unit_value(unit, "User") == ["zarrd"] and unit_value(unit, "RuntimeDirectory") == ["zarrd"]
    for key in ("ProtectSystem", "ProtectHome", "NoNewPrivileges", "ReadWritePaths"):
        assert unit_value(unit, key), key
    assert any("nvidia" in d for d in unit_value(unit, "DeviceAllow"))
    config = json.loads((prefix / "etc/zarrd/zarrd.json").read_text())
    assert config["listen"] == ["unix:/run/zarrd/zarrd.sock"]  # the RuntimeDirectory
    assert config["stores"][0]["root"].startswith("/var/lib/zarrd")  # StateDirectory, writable
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed here; the unit was checked field by field")
    proc = subprocess.run([tool, "verify", str(unit)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_exec_start_serves_notifies_reloads_and_stops(prefix, tmp_path):
    unit = prefix / "lib/systemd/system/zarrd.service"
    argv = shlex.split(unit_value(unit, "ExecStart")[0])
    # The administrator's edit of the installed config: stores and socket under this test's folder.
    config_path = Path(argv[2])
    config = json.loads(config_path.read_text())
    config["stores"][0]["root"] = str(tmp_path / "data")
    config["listen"] = [f"unix:{tmp_path}/zarrd.sock"]
    config["metrics_listen"] = "127.0.0.1:0"
    config_path.write_text(json.dumps(config))
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(20)
    log = open(tmp_path / "zarrd.log", "w+")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify")))
    try:
        assert notify.recv(64) == b"READY=1"
        zarrctl = str(prefix / "bin/zarrctl")
        health = subprocess.run([zarrctl, "--address", f"unix:{tmp_path}/zarrd.sock", "health"],
                                capture_output=True, text=True, timeout=30)
        assert health.returncode == 0 and health.stdout.strip() == "SERVING"
        config["log_level"] = "debug"
        config_path.write_text(json.dumps(config))
        proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while "SIGHUP: log level debug" not in Path(log.name).read_text() and time.time() < deadline:
            time.sleep(0.05)
        assert "SIGHUP: log level debug" in Path(log.name).read_text()
        assert proc.poll() is None  # a reload does not stop it
        # A file the administrator got wrong (a setting of the wrong type) is refused, and the
        # server keeps running on the configuration it has.
        config["stores"][0]["read_only"] = "yes"
        config_path.write_text(json.dumps(config))
        proc.send_signal(signal.SIGHUP)
        refused = "read_only must be true or false; keeping the running configuration"
        deadline = time.time() + 10
        while refused not in Path(log.name).read_text() and time.time() < deadline:
            time.sleep(0.05)
        assert refused in Path(log.name).read_text()
        health = subprocess.run([zarrctl, "--address", f"unix:{tmp_path}/zarrd.sock", "health"],
                                capture_output=True, text=True, timeout=30)
        assert proc.poll() is None and health.stdout.strip() == "SERVING"
        proc.send_signal(signal.SIGTERM)
        assert notify.recv(64) == b"STOPPING=1"
        assert proc.wait(timeout=30) == 0
        assert not (tmp_path / "zarrd.sock").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
