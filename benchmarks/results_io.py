"""Where every benchmark writes its figures: ``results/<stem>.md`` (the table) and ``<stem>.json``."""

from __future__ import annotations

import json
import os

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def write_results(stem: str, text: str, data: dict) -> None:
    """Write ``text`` to ``results/<stem>.md`` and ``data`` to ``results/<stem>.json``."""
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"{stem}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(RESULTS, f"{stem}.json"), "w") as f:
        json.dump(data, f, indent=1)
