"""The stack's env file (stack/c5c3stack/envfile.py): sourced by a real shell, an ``RGW_*`` variable exported before
keeps its value and every other variable is the stack's; read line by line, as the tests and the fault matrix read
it, every variable is the stack's."""
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
for folder in (REPO / "stack", REPO / "tests" / "faults"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from c5c3stack import envfile  # noqa: E402  (stack/, as tests/integration/objectstores.py imports it)
from c5c3faults.stackenv import read_env_file  # noqa: E402  (the fault matrix's reader of the same file)

STACK = {
    "KUBECONFIG": "/work/.stack/kube/admin.kubeconfig",
    "RGW_ENDPOINT": "http://127.0.0.1:17480",
    "RGW_REGION": "us-east-1",
    "RGW_ADMIN_ACCESS_KEY": "STACKACCESSKEY",
    "RGW_ADMIN_SECRET_KEY": "stack/secret+key=",
    "C5C3_TARGET_CLUSTERS": "edge-1 edge-2",
    "C5C3_SKIPPED_PARTS": "",
    "C5C3_KEYSTONE_INTERNAL_URLS": '{"openstack/cp": "http://127.0.0.1:15000/v3"}',
}
SHELLS = [s for s in ("bash", "dash") if shutil.which(s)]


@pytest.fixture
def env_file(tmp_path):
    path = tmp_path / "env"
    envfile.write(path, STACK)
    return path


def sourced(shell: str, path: Path, exported: dict) -> dict:
    """The stack's variables as a shell exports them after ``. <path>``, started with only ``exported`` set."""
    out = subprocess.run([shell, "-c", '. "$0" && env -0', str(path)], env={"PATH": "/usr/bin:/bin", **exported},
                         capture_output=True, text=True, check=True).stdout
    seen = dict(item.split("=", 1) for item in out.split("\0") if item)
    return {name: seen[name] for name in STACK if name in seen}


def first_words(path: Path) -> dict:
    """The line reader of tests/integration/conftest.py, demo/demo.py and controller/measure.py."""
    env = {}
    for line in path.read_text().splitlines():
        key, _, value = line[len("export "):].partition("=")
        env[key] = shlex.split(value)[0] if value else ""
    return env


@pytest.mark.parametrize("shell", SHELLS)
def test_sourcing_without_exports_gives_the_stacks_values(shell, env_file):
    assert sourced(shell, env_file, {}) == STACK


@pytest.mark.parametrize("shell", SHELLS)
def test_rgw_variables_exported_before_sourcing_win(shell, env_file):
    mine = {"RGW_ENDPOINT": "https://rgw.example:8443", "RGW_ADMIN_ACCESS_KEY": "MYKEY",
            "RGW_ADMIN_SECRET_KEY": "my secret with 'quotes' and $dollars"}
    seen = sourced(shell, env_file, mine)
    assert {k: seen[k] for k in mine} == mine
    assert seen["RGW_REGION"] == STACK["RGW_REGION"]  # not exported: the stack's


@pytest.mark.parametrize("shell", SHELLS)
def test_other_variables_are_always_the_stacks(shell, env_file):
    seen = sourced(shell, env_file, {"KUBECONFIG": "/elsewhere", "C5C3_TARGET_CLUSTERS": "other"})
    assert seen["KUBECONFIG"] == STACK["KUBECONFIG"]
    assert seen["C5C3_TARGET_CLUSTERS"] == STACK["C5C3_TARGET_CLUSTERS"]


@pytest.mark.parametrize("shell", SHELLS)
def test_an_empty_export_counts_as_unset(shell, env_file):
    assert sourced(shell, env_file, {"RGW_ENDPOINT": ""})["RGW_ENDPOINT"] == STACK["RGW_ENDPOINT"]


def test_line_readers_read_the_stacks_values(env_file):
    assert first_words(env_file) == STACK
    assert read_env_file(env_file) == STACK


def test_the_file_is_one_sorted_export_line_per_variable(env_file):
    lines = env_file.read_text().splitlines()
    assert [ln.split("=", 1)[0] for ln in lines] == [f"export {k}" for k in sorted(STACK)]
    assert env_file.read_text().endswith("\n")


def test_a_name_that_is_no_shell_identifier_is_refused():
    with pytest.raises(ValueError):
        envfile.line("RGW_X; rm -rf /", "v")
