"""Inputs and outputs: datasets as parts (``sources``), column roles and kinds (``schema``), row hashes
and cross-validation folds (``folds``), outputs that appear whole or not at all (``outputs``)."""
