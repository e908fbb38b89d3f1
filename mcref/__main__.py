"""``python -m mcref …``: the ``mcref`` command (:func:`mcref.cli.main`)."""

import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
