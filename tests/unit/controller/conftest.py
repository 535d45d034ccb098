"""The controller is a plain package under ``controller/`` (run with ``PYTHONPATH=controller``)."""
import sys
from pathlib import Path

CONTROLLER = Path(__file__).resolve().parents[3] / "controller"
if str(CONTROLLER) not in sys.path:
    sys.path.insert(0, str(CONTROLLER))
