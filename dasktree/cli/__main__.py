"""``python -m dasktree.cli``: the ``dasktree`` command."""

import sys

from . import main

sys.exit(main())
