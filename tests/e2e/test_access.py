"""Access: TLS on TCP with and without client certificates (mTLS), certificates made here by
openssl; the Unix socket's mode and group; read-only stores."""
import os
import shutil
import stat
import subprocess

import pytest
from conftest import Server, zarrctl

import zarrd


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def certs(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path / "certs"
    d.mkdir()
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=zarrd test CA",
            "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client", "stranger"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
                "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    for name in ("server", "client"):
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", "san.cnf", "-out", f"{name}.pem", cwd=d)
    # A certificate nobody trusts: self-signed.
    openssl("x509", "-req", "-in", "stranger.csr", "-signkey", "stranger.key", "-days", "2",
            "-out", "stranger.pem", cwd=d)
    return d


def tcp_of(server):
    return server.tcp.replace("127.0.0.1", "localhost")


def test_mtls_accepts_only_certified_clients(tmp_path, certs):
    server = Server(tmp_path, {"tls": {"cert_file": str(certs / "server.pem"),
                                       "key_file": str(certs / "server.key"),
                                       "client_ca_file": str(certs / "ca.pem")}})
    try:
        addr = tcp_of(server)
        ok = zarrd.connect(addr, timeout=10, tls_ca=certs / "ca.pem", tls_cert=certs / "client.pem",
                           tls_key=certs / "client.key")
        assert ok.info.version
        ok.close()
        for kw in ({"tls_ca": certs / "ca.pem"},  # no client certificate
                   {"tls_ca": certs / "ca.pem", "tls_cert": certs / "stranger.pem",
                    "tls_key": certs / "stranger.key"},  # an untrusted one
                   {}):  # no TLS at all
            with pytest.raises(zarrd.ZarrdError):
                zarrd.connect(addr, timeout=2, **kw)
        # The C++ client: zarrctl with the same certificates.
        out = zarrctl(addr, "--tls-ca", certs / "ca.pem", "--tls-cert", certs / "client.pem",
                      "--tls-key", certs / "client.key", "info").stdout
        assert out.startswith("zarrd ")
        assert zarrctl(addr, "info", check=False).returncode == 1
        # health over the same TLS: SERVING with the certificates, unreachable without them.
        health = zarrctl(addr, "--tls-ca", certs / "ca.pem", "--tls-cert", certs / "client.pem",
                         "--tls-key", certs / "client.key", "health", "--timeout", "10")
        assert health.stdout == "SERVING\n"
        assert zarrctl(addr, "health", "--timeout", "2", check=False).returncode == 1
        assert zarrctl(addr, "--tls-ca", certs / "ca.pem", "health", "--timeout", "2",
                       check=False).returncode == 1
        # The Unix socket is not TLS: its file mode guards it.
        assert zarrd.connect(server.unix).info.version
    finally:
        assert server.stop() == 0


def test_tls_without_client_certificates(tmp_path, certs):
    server = Server(tmp_path, {"tls": {"cert_file": str(certs / "server.pem"),
                                       "key_file": str(certs / "server.key")}})
    try:
        c = zarrd.connect(tcp_of(server), timeout=10, tls_ca=certs / "ca.pem")
        c.create_array("local", "t", shape=(4,), dtype="int8")
        c.open_array("local", "t")[:] = [1, 2, 3, 4]
        assert list(c.open_array("local", "t")[:]) == [1, 2, 3, 4]
        c.close()
    finally:
        assert server.stop() == 0


def test_bad_tls_config_is_refused_at_start(tmp_path):
    with pytest.raises(RuntimeError, match="tls.key_file: cannot read .*missing.key"):
        Server(tmp_path, {"tls": {"cert_file": "missing.pem", "key_file": "missing.key"}})


def test_socket_mode_and_group(tmp_path):
    group = "daemon"
    server = Server(tmp_path, {"socket_mode": "0640", "socket_group": group})
    try:
        st = os.stat(server.socket)
        assert stat.S_IMODE(st.st_mode) == 0o640
        import grp
        assert st.st_gid == grp.getgrnam(group).gr_gid
    finally:
        server.stop()


def test_read_only_store_is_permission_denied(server):
    c = zarrd.connect(server.unix)
    c.create_array("local", "w", shape=(3,), dtype="int8")
    with pytest.raises(zarrd.PermissionDeniedError, match="read-only"):
        c.create_array("ro", "w2", shape=(3,), dtype="int8")
    with pytest.raises(zarrd.PermissionDeniedError):
        c.open_array("ro", "w")[:] = 1
    with pytest.raises(zarrd.PermissionDeniedError):
        c.delete("ro", "w")
    assert list(c.open_array("local", "w")[:]) == [0, 0, 0]  # nothing was written
