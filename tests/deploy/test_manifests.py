"""The Kubernetes manifests and the container file (no cluster or container engine runs here):
every object valid against the Kubernetes API schemas (kubernetes-models from npm, installed by
`scripts/dev` from tests/deploy/k8s-validate's lockfile), and the fields that make them start as
shipped: the namespace exists, the hostPath folders are given to zarrd's user before it starts,
zarrd and its clients see the same GPUs without the device plugin's per-pod GPU, metrics on a pod
port that Prometheus finds, the S3 store's credentials from a Secret; probes on gRPC health, a
shared PID namespace for CUDA IPC, the socket volume shared by server and client. The ConfigMap's
config is started as a real zarrd (its paths moved under a temporary directory)."""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
VALIDATOR = Path(__file__).resolve().parent / "k8s-validate"
BUILD = Path(os.environ.get("ZARRD_BUILD_DIR", ROOT / "build"))


def load(name):
    return yaml.safe_load((DEPLOY / "k8s" / name).read_text())


def mounts(container, volumes):
    by_name = {v["name"]: v for v in volumes}
    return {m["mountPath"]: by_name[m["name"]] for m in container["volumeMounts"]}


def env(container):
    return {e["name"]: e for e in container.get("env", [])}


def config():
    return json.loads(load("configmap.yaml")["data"]["zarrd.json"])


def objects():
    return [{"file": p.name, "object": o} for p in sorted((DEPLOY / "k8s").glob("*.yaml"))
            for o in yaml.safe_load_all(p.read_text()) if o]


def validate(items):
    if not (VALIDATOR / "node_modules" / "kubernetes-models").is_dir():
        pytest.fail("the validator is not installed: scripts/dev build runs npm ci in "
                    "tests/deploy/k8s-validate")
    return subprocess.run(["node", str(VALIDATOR / "validate.mjs")], input=json.dumps(items),
                          capture_output=True, text=True, timeout=120)


def test_manifests_are_valid_kubernetes_objects():
    items = objects()
    assert {(o["object"]["kind"], o["object"]["metadata"]["name"]) for o in items} == {
        ("Namespace", "zarrd"), ("DaemonSet", "zarrd"), ("ConfigMap", "zarrd-config"),
        ("Pod", "zarrd-client")}
    assert all(o["object"]["metadata"].get("namespace") == "zarrd" for o in items
               if o["object"]["kind"] != "Namespace")
    proc = validate(items)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(items)} objects, 0 problems" in proc.stdout
    # and the validator does refuse what the API server would.
    broken = json.loads(json.dumps(items))
    ds = next(o["object"] for o in broken if o["object"]["kind"] == "DaemonSet")
    ds["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "metrics"
    del ds["spec"]["selector"]
    proc = validate(broken)
    assert proc.returncode == 1
    assert "containerPort must be integer" in proc.stdout and "selector" in proc.stdout, proc.stdout


def test_daemonset():
    ds = load("daemonset.yaml")
    assert ds["kind"] == "DaemonSet" and ds["apiVersion"] == "apps/v1"
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostPID"] is True
    assert ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"]
    (c,) = spec["containers"]
    for probe in ("readinessProbe", "livenessProbe"):
        cmd = c[probe]["exec"]["command"]
        assert cmd[0] == "zarrctl" and "health" in cmd and "unix:/run/zarrd/zarrd.sock" in cmd
    assert spec["securityContext"]["runAsUser"] != 0
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    m = mounts(c, spec["volumes"])
    assert m["/run/zarrd"]["hostPath"]["path"] == "/run/zarrd"
    assert m["/etc/zarrd"]["configMap"]["name"] == "zarrd-config"
    assert c["args"] == ["--config", "/etc/zarrd/zarrd.json"]
    # The config: the socket in the shared directory, local stores in a mounted volume, and only
    # settings zarrd knows (its parser refuses unknown ones).
    cfg = config()
    assert cfg["listen"] == ["unix:/run/zarrd/zarrd.sock"]
    assert all(any(s["root"].startswith(p) for p in m) for s in cfg["stores"] if "root" in s)
    known = set(re.findall(r'"(\w+)"', (ROOT / "server" / "config.cc").read_text()))
    assert set(cfg) <= known, set(cfg) - known


def test_host_folders_are_given_to_zarrds_user_before_it_starts(tmp_path):
    """The kubelet makes DirectoryOrCreate folders root:root 0755; the initContainer's command
    gives each hostPath folder zarrd writes to zarrd's uid and gid."""
    spec = load("daemonset.yaml")["spec"]["template"]["spec"]
    uid, gid = spec["securityContext"]["runAsUser"], spec["securityContext"]["runAsGroup"]
    (c,) = spec["containers"]
    host_dirs = {path: v["hostPath"]["path"] for path, v in mounts(c, spec["volumes"]).items()
                 if v.get("hostPath", {}).get("type") == "DirectoryOrCreate"}
    assert sorted(host_dirs) == ["/run/zarrd", "/var/lib/zarrd"]
    (init,) = spec["initContainers"]
    assert init["securityContext"]["runAsUser"] == 0
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN"]}
    init_mounts = mounts(init, spec["volumes"])
    shell, flag, script, name, *dirs = init["command"]
    assert (shell, flag) == ("sh", "-c") and sorted(dirs) == sorted(host_dirs)
    assert all(init_mounts[d] == mounts(c, spec["volumes"])[d] for d in dirs)
    assert f"chown {uid}:{gid} " in script
    if os.geteuid() != 0:
        pytest.skip("running the initContainer's command needs root")
    # Its command, run on folders made as the kubelet makes them.
    here = [tmp_path / d.strip("/") for d in dirs]
    for d in here:
        d.mkdir(parents=True, mode=0o755)
        os.chown(d, 0, 0)
    subprocess.run([shell, flag, script, name, *map(str, here)], check=True, timeout=30)
    for d in here:
        st = d.stat()
        assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (uid, gid, 0o755), d


def test_zarrd_and_clients_see_the_same_gpus():
    """No `nvidia.com/gpu` request (the device plugin would give each pod another GPU): both run
    with the NVIDIA runtime and every GPU visible, and share the host's PIDs and the socket."""
    ds_spec = load("daemonset.yaml")["spec"]["template"]["spec"]
    pod_spec = load("client-pod.yaml")["spec"]
    for spec in (ds_spec, pod_spec):
        (c,) = spec["containers"]
        assert "nvidia.com/gpu" not in json.dumps(c.get("resources", {}))
        assert spec["runtimeClassName"] == "nvidia"
        assert env(c)["NVIDIA_VISIBLE_DEVICES"]["value"] == "all"
        assert "compute" in env(c)["NVIDIA_DRIVER_CAPABILITIES"]["value"]
        assert spec["nodeSelector"] == ds_spec["nodeSelector"]
        assert spec.get("hostPID") is True
    (c,) = pod_spec["containers"]
    assert mounts(c, pod_spec["volumes"])["/run/zarrd"]["hostPath"]["path"] == "/run/zarrd"
    assert env(c)["ZARRD_ADDRESS"]["value"] == config()["listen"][0]


def test_metrics_on_a_pod_port_that_prometheus_scrapes():
    template = load("daemonset.yaml")["spec"]["template"]
    (c,) = template["spec"]["containers"]
    host, port = config()["metrics_listen"].rsplit(":", 1)
    assert host == "0.0.0.0"
    assert {"name": "metrics", "containerPort": int(port), "protocol": "TCP"} in c["ports"]
    annotations = template["metadata"]["annotations"]
    assert annotations == {"prometheus.io/scrape": "true", "prometheus.io/port": port,
                           "prometheus.io/path": "/metrics"}


def test_s3_store_credentials_come_from_a_secret():
    (s3,) = [s for s in config()["stores"] if s.get("kind") == "s3"]
    assert {"endpoint", "bucket", "prefix", "region", "addressing"} <= set(s3)
    assert not {k for k in s3 if "key" in k.lower() or "secret" in k.lower()}
    (c,) = load("daemonset.yaml")["spec"]["template"]["spec"]["containers"]
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        ref = env(c)[name]["valueFrom"]["secretKeyRef"]
        assert ref["name"] == "zarrd-s3" and ref["key"] == name


def test_the_configmaps_config_starts_zarrd(tmp_path):
    """zarrd started on the ConfigMap's config, its folders moved under tmp_path (and the
    metrics port to a free one): it binds the socket, creates in its store, serves metrics.
    Stores of a kind this build does not know yet (s3, before the S3 store lands) are left out."""
    zarrd, zarrctl = BUILD / "server" / "zarrd", BUILD / "client" / "zarrctl"
    if not zarrd.exists():
        pytest.fail(f"{zarrd} is not built")
    cfg = config()
    kinds = set(re.findall(r'store\.kind != "(\w+)"', (ROOT / "server" / "config.cc").read_text()))
    cfg["stores"] = [s for s in cfg["stores"] if s.get("kind", "local") in kinds]
    text = json.dumps(cfg).replace("/run/zarrd", str(tmp_path / "run")).replace(
        "/var/lib/zarrd", str(tmp_path / "lib")).replace(":9464", ":0")
    for d in ("run", "lib"):
        (tmp_path / d).mkdir(mode=0o755)
    (tmp_path / "zarrd.json").write_text(text)
    with open(tmp_path / "zarrd.log", "w+") as log:
        proc = subprocess.Popen([str(zarrd), "--config", str(tmp_path / "zarrd.json")],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 20
            while "ready" not in (tmp_path / "zarrd.log").read_text():
                assert proc.poll() is None and time.time() < deadline, (tmp_path / "zarrd.log").read_text()
                time.sleep(0.05)
            address = f"unix:{tmp_path / 'run' / 'zarrd.sock'}"
            assert (tmp_path / "run" / "zarrd.sock").stat().st_mode & 0o777 == 0o666
            subprocess.run([str(zarrctl), "--address", address, "health", "--timeout", "5"],
                           check=True, timeout=30)
            subprocess.run([str(zarrctl), "--address", address, "create", "local:a",
                            "--shape", "4,4", "--chunks", "2,2", "--dtype", "int32"], check=True, timeout=30,
                           capture_output=True)
            assert (tmp_path / "lib" / "local" / "a" / "zarr.json").exists()
            url = re.search(r"metrics on (http://\S+)", (tmp_path / "zarrd.log").read_text()).group(1)
            assert url.startswith("http://0.0.0.0:")
            import urllib.request
            port = url.rsplit(":", 1)[1].split("/")[0]
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
            assert b"zarrd_requests_total" in body
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_container_file():
    text = (DEPLOY / "container" / "Containerfile").read_text()
    stages = re.findall(r"^FROM (\S+)(?: AS (\w+))?", text, re.M)
    assert len(stages) >= 3 and stages[-1][0].endswith("-slim")
    assert re.search(r"^USER zarrd$", text, re.M)
    assert re.search(r"^HEALTHCHECK .*\n?.*zarrctl.*health", text, re.M)
    # The DaemonSet's uid is the image's user, so clients in the image share its shm regions.
    uid = load("daemonset.yaml")["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
    assert re.search(rf"useradd .*--uid {uid} .*zarrd", text)
    # Every file it copies from the source tree exists.
    for src in re.findall(r"^COPY (?!--from)(\S+) ", text, re.M):
        assert (DEPLOY.parent / src).exists() or src == ".", src
