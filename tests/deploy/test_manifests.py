"""The Kubernetes manifests and the container file, checked for the fields that matter (no
cluster or container engine runs here): probes on gRPC health, a shared PID namespace for CUDA
IPC, the GPU request, the socket volume shared by server and client, a config that zarrd's rules
accept and that puts the socket and stores where the volumes are."""
import json
import re
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def load(name):
    return yaml.safe_load((DEPLOY / "k8s" / name).read_text())


def mounts(container, volumes):
    by_name = {v["name"]: v for v in volumes}
    return {m["mountPath"]: by_name[m["name"]] for m in container["volumeMounts"]}


def test_daemonset():
    ds = load("daemonset.yaml")
    assert ds["kind"] == "DaemonSet" and ds["apiVersion"] == "apps/v1"
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostPID"] is True
    assert ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"]
    (c,) = spec["containers"]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 1
    for probe in ("readinessProbe", "livenessProbe"):
        cmd = c[probe]["exec"]["command"]
        assert cmd[0] == "zarrctl" and "health" in cmd and "unix:/run/zarrd/zarrd.sock" in cmd
    assert spec["securityContext"]["runAsUser"] != 0
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    m = mounts(c, spec["volumes"])
    assert m["/run/zarrd"]["hostPath"]["path"] == "/run/zarrd"
    assert m["/etc/zarrd"]["configMap"]["name"] == "zarrd-config"
    assert c["args"] == ["--config", "/etc/zarrd/zarrd.json"]
    # The config: the socket in the shared directory, stores in a mounted volume, metrics on
    # loopback, and only settings zarrd knows (its parser refuses unknown ones).
    cm = load("configmap.yaml")
    assert cm["metadata"]["name"] == "zarrd-config"
    config = json.loads(cm["data"]["zarrd.json"])
    assert config["listen"] == ["unix:/run/zarrd/zarrd.sock"]
    assert all(any(s["root"].startswith(p) for p in m) for s in config["stores"])
    assert config["metrics_listen"].startswith("127.0.0.1:")
    known = set(re.findall(r'"(\w+)"', (DEPLOY.parent / "server" / "config.cc").read_text()))
    assert set(config) <= known, set(config) - known


def test_client_pod_shares_pids_socket_and_gpu():
    pod = load("client-pod.yaml")
    spec = pod["spec"]
    assert spec.get("hostPID") is True or spec.get("shareProcessNamespace") is True
    (c,) = spec["containers"]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert mounts(c, spec["volumes"])["/run/zarrd"]["hostPath"]["path"] == "/run/zarrd"


def test_container_file():
    text = (DEPLOY / "container" / "Containerfile").read_text()
    stages = re.findall(r"^FROM (\S+)(?: AS (\w+))?", text, re.M)
    assert len(stages) >= 3 and stages[-1][0].endswith("-slim")
    assert re.search(r"^USER zarrd$", text, re.M)
    assert re.search(r"^HEALTHCHECK .*\n?.*zarrctl.*health", text, re.M)
    # Every file it copies from the source tree exists.
    for src in re.findall(r"^COPY (?!--from)(\S+) ", text, re.M):
        assert (DEPLOY.parent / src).exists() or src == ".", src
