"""Version skew (docs/install.md, "Version skew"): the collection version is said once per place and they agree, an
image tag naming another version is refused before anything is applied, and a container deployed by a role of
another version refuses to start (controller/c5c3_orders_controller/skew.py)."""
import importlib.util
import logging
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "plugins" / "filter" / "install_checks.py"
_spec = importlib.util.spec_from_file_location("install_checks_skew", PLUGIN)
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
sys.path.insert(0, str(REPO / "controller"))
from c5c3_orders_controller import __version__  # noqa: E402
from c5c3_orders_controller import skew  # noqa: E402

GALAXY = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]


def test_every_place_names_the_same_version():
    role_vars = yaml.safe_load((REPO / "roles" / "install" / "vars" / "main.yml").read_text())
    defaults = yaml.safe_load((REPO / "roles" / "install" / "defaults" / "main.yml").read_text())
    specs = yaml.safe_load((REPO / "roles" / "install" / "meta" / "argument_specs.yml").read_text())
    assert __version__ == GALAXY
    assert role_vars["c5c3_install_collection_version"] == GALAXY
    assert defaults["c5c3_install_image"].endswith(":" + GALAXY)
    assert specs["argument_specs"]["main"]["options"]["c5c3_install_image"]["default"] == defaults["c5c3_install_image"]


@pytest.mark.parametrize("image, says", [
    ("localhost/c5c3-orders:0.2.0", ""),
    ("registry.example:5000/team/c5c3-orders:0.2.0@sha256:" + "a" * 64, ""),
    ("localhost/c5c3-orders@sha256:" + "b" * 64, ""),      # a digest alone cannot tell
    ("registry.example:5000/c5c3-orders", ""),               # a port is no tag
    ("localhost/c5c3-orders:latest", ""),
    ("localhost/c5c3-orders:0.1.0", "the image localhost/c5c3-orders:0.1.0 is c5c3.orders 0.1.0"),
    ("localhost/c5c3-orders:v0.3.0", "is c5c3.orders 0.3.0, this install role is 0.2.0"),
    ("registry.example:5000/c5c3-orders:0.2.1-rc.1@sha256:" + "c" * 64, "is c5c3.orders 0.2.1-rc.1"),
])
def test_an_image_tag_naming_another_version_is_refused(image, says):
    found = C.image_skew(image, "0.2.0")
    assert (found == "") if not says else (says in found and "nothing was applied" in found), found


class Log:
    def __init__(self):
        self.lines = []

    def error(self, fmt, *args):
        self.lines.append(("error", fmt % args))

    def warning(self, fmt, *args):
        self.lines.append(("warning", fmt % args))


def test_a_container_of_another_version_refuses_to_start_and_says_so(tmp_path):
    log, termination = Log(), tmp_path / "termination-log"
    termination.write_text("")
    assert skew.refuse_on_skew({skew.EXPECTED: "0.1.0"}, log, str(termination)) == skew.REFUSED
    assert log.lines[0][0] == "error" and f"this image runs c5c3.orders {__version__}" in log.lines[0][1]
    assert "install role that deployed it is 0.1.0" in termination.read_text()


@pytest.mark.parametrize("environ", [{}, {skew.EXPECTED: __version__}, {skew.EXPECTED: " "}])
def test_the_same_version_or_none_said_starts(environ):
    log = Log()
    assert skew.refuse_on_skew(environ, log, "/nonexistent/termination-log") == 0 and log.lines == []


def test_an_allowed_skew_only_warns():
    log = Log()
    assert skew.refuse_on_skew({skew.EXPECTED: "0.1.0", skew.ALLOW: "true"}, log, "/nonexistent") == 0
    assert log.lines[0][0] == "warning" and "allowed" in log.lines[0][1]


def test_the_controller_refuses_before_it_connects_anywhere(monkeypatch, caplog):
    from c5c3_orders_controller import __main__ as cli
    monkeypatch.setenv(skew.EXPECTED, "0.0.1")
    monkeypatch.setattr(skew, "TERMINATION_LOG", "/nonexistent/termination-log")
    with caplog.at_level(logging.ERROR):
        assert cli.main(["--kubeconfig", "/nonexistent/kubeconfig", "--state-dir", "/nonexistent"]) == skew.REFUSED
    assert "version skew" in caplog.text
