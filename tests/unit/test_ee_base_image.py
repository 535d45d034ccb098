"""Supply chain (docs/install.md, "Supply chain"): the execution environment's base image is named by digest, so an
AWX image build pulls exactly the manifest reviewed, never whatever the tag points at that day."""
import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BY_DIGEST = re.compile(r"^[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9._/-]+(?::[A-Za-z0-9._-]+)?@sha256:[0-9a-f]{64}$")


def test_the_ee_base_image_is_named_by_digest():
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    name = ee["images"]["base_image"]["name"]
    assert BY_DIGEST.match(name), f"execution-environment.yml names its base image without a digest: {name}"


def test_the_docs_name_the_same_digest():
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    digest = ee["images"]["base_image"]["name"].split("@", 1)[1]
    assert digest in (REPO / "docs" / "install.md").read_text()
