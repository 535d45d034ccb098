"""Reading raw API objects defensively (pure): a watch may deliver any shape, and nothing here may raise."""
from typing import Any, Mapping


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def meta_of(obj: Any) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}
