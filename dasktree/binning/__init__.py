"""Pass 0 and the codes: the mergeable summary (``summary``), the bin spec it yields (``spec``),
and rows encoded as attribute codes (``encode``, with the numeric bucket search in ``codes``)."""
