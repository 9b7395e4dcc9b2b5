"""The command's synopsis, every verb with every option, made from the parsers themselves.

``python -m dasktree.cli.synopsis`` prints it; the user guide's synopsis (docs/guide/cli.md)
is this text, and a test fails when the two differ, so the docs list every option there is.
"""

from __future__ import annotations

import argparse

__all__ = ["synopsis", "WIDTH"]

WIDTH = 100
"""Lines are wrapped at this width (not the terminal's), so the text is the same everywhere."""


def synopsis() -> str:
    """One usage block per verb, in the order ``dasktree --help`` lists them."""
    from .parser import build_parser

    parser = build_parser()
    [verbs] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    blocks = []
    for sub in verbs.choices.values():
        formatter = argparse.HelpFormatter(prog=sub.prog, width=WIDTH)
        formatter.add_usage(sub.usage, sub._actions, sub._mutually_exclusive_groups, prefix="")
        blocks.append(formatter.format_help().rstrip())
    return "\n".join(blocks) + "\n"


if __name__ == "__main__":
    print(synopsis(), end="")
