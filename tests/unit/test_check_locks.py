"""tests/tools/check_locks.py: a pin file and its hash lock must agree (docs/install.md, "Supply chain")."""
import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "check_locks.py"
spec = importlib.util.spec_from_file_location("check_locks", TOOL)
check_locks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_locks)

HASH = "--hash=sha256:" + "0" * 64


def write_tree(root: Path, files: dict) -> Path:
    (root / "requirements").mkdir()
    for name, text in files.items():
        (root / "requirements" / name).write_text(text)
    return root


@pytest.fixture
def pairs(monkeypatch):
    monkeypatch.setattr(check_locks, "PAIRS", {"requirements/test.lock": "requirements/test.txt"})


def test_the_repositorys_locks_agree_with_their_pin_files():
    assert check_locks.disagreements() == []


@pytest.mark.parametrize("files, expected", [
    pytest.param({"test.txt": "-r runtime.txt\npytest==9.2.0\n", "runtime.txt": "kubernetes==33.1.0  # why\n",
                  "test.lock": f"kubernetes==33.1.0 \\\n    {HASH}\npytest==9.2.0 \\\n    {HASH}\n    # via -r x\n"},
                 [], id="agree, an included file and a comment"),
    pytest.param({"test.txt": "Ruamel_Yaml==0.19.1\n", "test.lock": f"ruamel-yaml==0.19.1 {HASH}\n"},
                 [], id="names compared as PyPI compares them"),
    pytest.param({"test.txt": "pytest==9.3.0\n", "test.lock": f"pytest==9.2.0 {HASH}\n"},
                 ["requirements/test.lock: pytest is 9.2.0, but requirements/test.txt pins 9.3.0 (make locks)"],
                 id="a pin moved, the lock did not"),
    pytest.param({"test.txt": "-r runtime.txt\n", "runtime.txt": "boto3==1.44.8\n", "test.lock": ""},
                 ["requirements/test.lock: boto3 is absent, but requirements/runtime.txt pins 1.44.8 (make locks)"],
                 id="a pin of an included file missing from the lock"),
    pytest.param({"test.txt": "pytest==9.2.0\n", "test.lock": "pytest==9.2.0\n"},
                 ["requirements/test.lock: pytest==9.2.0 carries no --hash"], id="no hash"),
    pytest.param({"test.txt": "", "test.lock": f"pytest>=9 {HASH}\n"},
                 ["requirements/test.lock: 'pytest>=9' is not pinned with =="], id="not pinned"),
    pytest.param({"test.txt": "pytest==9.2.0\n"}, ["requirements/test.lock: missing (make locks)"], id="no lock"),
])
def test_disagreements(tmp_path, pairs, files, expected):
    assert check_locks.disagreements(write_tree(tmp_path, files)) == expected
