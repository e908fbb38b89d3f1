"""The version of mcref, in one place: the package face shows it as ``mcref.__version__``, and
the study store and the HTML reports record it (read at call time, ``_version.VERSION``)."""

VERSION = "0.2.0"
