"""The stack's env file (``.stack/env``): one ``export NAME=value`` line per variable, sourced by shells and the
Makefile, and read line by line by the tests, the fault matrix, the demo and the controller's measurements.

``RGW_*`` variables the user exported before sourcing the file win (docs/testing.md, "Ceph RGW"): a gateway of
one's own, or other admin keys, are not silently replaced by the stack's. Their line is

    export RGW_ENDPOINT='http://127.0.0.1:17480' ${RGW_ENDPOINT:+"RGW_ENDPOINT=$RGW_ENDPOINT"}

The shell expands every word before ``export`` runs, so the second word carries the value from before the line
(when set and not empty) and, assigned last, wins; unset, it expands to nothing and the stack's value stays. A
line reader that takes the first word after ``=`` (``shlex.split(value)[0]``, as every reader of the file in this
repository does) still reads the stack's value. Every other variable is the stack's, whatever was exported.
"""
import re
import shlex
from pathlib import Path
from typing import Mapping

HONOURED_PREFIX = "RGW_"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # the name is shell code on the line, so only an identifier


def line(name: str, value: str) -> str:
    """One ``export`` line; an ``RGW_*`` variable keeps a value exported before the file is sourced."""
    if not NAME.fullmatch(name):
        raise ValueError(f"not a shell variable name: {name!r}")
    stack_value = f"{name}={shlex.quote(value)}"
    if not name.startswith(HONOURED_PREFIX):
        return f"export {stack_value}\n"
    return f'export {stack_value} ${{{name}:+"{name}=${name}"}}\n'


def render(env: Mapping[str, str]) -> str:
    """The whole file, sorted by name."""
    return "".join(line(name, value) for name, value in sorted(env.items()))


def write(path: Path, env: Mapping[str, str]) -> None:
    path.write_text(render(env))
