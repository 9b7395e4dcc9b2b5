"""Reproducers of upstream bugs dasktree works around: each a script that writes the input it needs
(never a fuzzer's output) and shows the bug, for a report to the project it belongs to."""
