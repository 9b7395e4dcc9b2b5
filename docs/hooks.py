"""mkdocs hooks (``hooks:`` in mkdocs.yml): the benchmark results as pages of the site.

The pages link to each claim's results file where it is in the repository, beside ``docs/``
(``../benchmarks/results/core.md`` from ``docs/performance.md``), so the links work where the
Markdown is read on a code host. The site has no page outside ``docs/``: these hooks add every
``benchmarks/results/*.md`` to it as ``results/NAME.md`` and point those links there.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
LINK = re.compile(r"\]\((?:\.\./)+benchmarks/results/([\w.-]+\.md)(#[\w-]*)?\)")


def on_files(files, config):
    for path in sorted(RESULTS.glob("*.md")):
        files.append(File.generated(config, f"results/{path.name}", abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    up = "../" * page.file.src_uri.count("/")
    return LINK.sub(lambda m: f"]({up}results/{m.group(1)}{m.group(2) or ''})", markdown)
