"""The command's argument parser: options spelled out in full, and a misspelt one named with the closest.

argparse takes any unambiguous prefix of an option by default (``--max-dept 5`` as ``--max-depth``),
so an option added later can silently change what an old command line means; :class:`Parser`
refuses prefixes. An option the verb does not have is one line naming the close options, if any
(:func:`difflib.get_close_matches` on the names without dashes), and exit 2, instead of the top-level usage.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["Parser", "closest_options"]


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` without prefix matching (``allow_abbrev=False``), for the
    top level and, through ``add_subparsers``, every verb; unknown options get a suggestion."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        unknown = [a for a in extras if a.startswith("-") and a != "-"]
        if unknown and self._subparsers is None:  # a verb's own parser: it knows its options
            self.unknown_option(unknown[0].split("=", 1)[0])
        return namespace, extras

    def unknown_option(self, option: str) -> None:
        """One line on stderr naming ``option`` and the closest options of this parser; exit 2."""
        close = closest_options(option, self._option_string_actions)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        command = self.prog.split(" ", 1)[1] if " " in self.prog else self.prog
        print(f"dasktree: error: {command}: no option {option}{hint} ('{self.prog} --help' lists them)",
              file=sys.stderr)
        sys.exit(2)


def closest_options(option: str, options) -> list[str]:
    """Up to 3 of ``options`` close to ``option`` by :func:`difflib.get_close_matches`, closest first,
    or none. The names are compared without their dashes: every option shares ``--``, which alone
    made ``--bogus`` look close to ``--out``."""
    import difflib  # here: a command spelt right imports no difflib

    names = {o[2:]: o for o in sorted(options) if o.startswith("--")}
    return [names[n] for n in difflib.get_close_matches(option.lstrip("-"), list(names), n=3, cutoff=0.6)]
