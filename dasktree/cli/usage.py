"""Usage errors as every other error: one line on stderr, exit 2.

argparse prints the whole usage block before its message; a scheduler's log or a wrapper reading
the last line then shows a fragment. :func:`one_line_errors` makes the parser and each verb's
parser print ``dasktree VERB: error: MESSAGE (see dasktree VERB --help)`` alone.
"""

from __future__ import annotations

import argparse
import types

from ..errors import EXIT_USAGE

__all__ = ["one_line_errors"]


def _error(self: argparse.ArgumentParser, message: str):
    text = " ".join(f"{self.prog}: error: {message} (see '{self.prog} --help')".split())
    self.exit(EXIT_USAGE, text + "\n")


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser``, its usage errors (and its verbs') printed as one line; returns it."""
    parser.error = types.MethodType(_error, parser)
    for action in parser._actions:  # argparse keeps the verbs' parsers here, and only here
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                one_line_errors(sub)
    return parser

