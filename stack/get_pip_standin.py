# Stand-in for ansible-test's get-pip bootstrap (its download URL is unreachable here): run the pip wheel
# bundled with ensurepip, which then installs the pip version ansible-test asked for from PyPI.
import glob
import os
import sys
import ensurepip

WHEEL = sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl")))[-1]
sys.path.insert(0, WHEEL)
from pip._internal.cli.main import main  # noqa: E402

ARGS = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(main(["install", "--upgrade", "--force-reinstall"] + ARGS))
