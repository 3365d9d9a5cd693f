"""zarrd's command line: --help, --version, and usage errors (exit 2) before anything starts."""
import subprocess

from conftest import ZARRD


def run_zarrd(tmp_path, *args):
    return subprocess.run([*ZARRD, *map(str, args)], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)


def test_help_and_version(tmp_path):
    out = run_zarrd(tmp_path, "--help")
    assert out.returncode == 0, out.stderr
    for word in ["--config", "--listen", "--log-level", "--version", "Example:"]:
        assert word in out.stdout, word
    version = run_zarrd(tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.startswith("zarrd 0.")


def test_usage_errors_exit_2_and_start_nothing(tmp_path):
    (tmp_path / "bad.json").write_text('{"stores": [{"name": "x", "kind": "nowhere"}]}')
    cases = [
        (["--bogus"], "--bogus"),
        (["--listen"], "--listen"),
        (["--listen", "unix:a.sock", "extra"], "extra"),
        (["--log-level", "loud"], "loud"),
        (["--config"], "--config"),
        (["--config", tmp_path / "missing.json"], "missing.json"),
        (["--config", tmp_path / "bad.json"], "stores[x].kind"),
    ]
    for args, needle in cases:
        proc = run_zarrd(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
        assert proc.stderr.startswith("zarrd: ") and needle in proc.stderr, (args, proc.stderr)
    assert not (tmp_path / "zarrd-data").exists() and not (tmp_path / "a.sock").exists()
