"""Command-line interface: ``mcref stats``, ``mcref validate``, ``mcref fit``, ``mcref decimate``,
``mcref recalibrate``, ``mcref report``, ``mcref demo``, ``mcref bench``, ``mcref study``, ``mcref datasets``.

The CLI calls only the public API. Bad input prints one clear line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ._bench import parser_bench
from ._posterior import parser_posterior
from ._samples import parser_compare, parser_diversity
from ._data import parser_datasets, parser_decimate, parser_demo, parser_fit, parser_stats
from ._recalibrate import parser_recalibrate
from ._study import parser_study
from ._verdicts import parser_report, parser_validate

__all__ = ["main", "build_parser", "cli_words"]


def build_parser() -> argparse.ArgumentParser:
    """The command line: one parser function per subcommand (``parser_<command>`` of its room)."""
    p = argparse.ArgumentParser(prog="mcref", description="Calibration statistics of ML uncertainties: "
                                "bootstrap CIs, simulated references, zeta-scores.")
    from .._version import VERSION

    p.add_argument("--version", action="version", version=f"mcref {VERSION}", help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (parser_stats, parser_validate, parser_fit, parser_decimate, parser_recalibrate, parser_report,
                parser_demo, parser_bench, parser_study, parser_datasets, parser_compare, parser_diversity,
                parser_posterior):
        add(sub)
    return p


#: API argument → CLI option, for error messages raised by the library
_CLI_NAMES = {
    "n_boot": "--boot", "n_mc": "--mc", "n_bins": "--bins", "min_count": "--min-count", "shrink": "--shrink",
    "shrink=True": "--shrink", "seed": "--seed", "dist": "--dists", "dists": "--dists", "stats": "--stat",
    "name": "--dataset", "E": "--E", "E=": "--E COLUMN", "u": "--u", "u=": "--u COLUMN", "pred": "--pred",
    "ref": "--ref", "pred=": "--pred COLUMN", "ref=": "--ref COLUMN", "x": "x", "x=": "x",
    "max_fraction": "--max-fraction", "steps": "--steps", "rule": "--rule", "path": "FILE",
    "delimiter": "--delimiter", "sources": "PATH", "n_splits": "--cv", "degree": "--degree", "method": "--method",
    "by": "--by", "pairs": "--pairs", "scheduler": "--scheduler", "connect_timeout": "--connect-timeout",
    "tolerance": "--tolerance", "params": "--params", "case": "--case", "draw": "--draw",
}


def cli_words(message: str) -> str:
    """Reword a library error for the command line: `n_boot` → --boot, "Pass `E=`" → "pass --E COLUMN", …"""
    import re

    def sub(m):
        return _CLI_NAMES.get(m.group(1), m.group(0))

    out = re.sub(r"`([A-Za-z_]+=?(?:True)?)`", sub, message)
    for api, cli in (("pass shrink=True", "pass --shrink"), ("shrink=True", "--shrink"), ("Pass --", "pass --"),
                     ("--seed must be None, a non-negative integer, a numpy SeedSequence or a Generator",
                      "--seed must be a non-negative integer"),
                     ("--seed must be None or a non-negative integer", "--seed must be a non-negative integer"),
                     ("pass store=... to make", "give --store FILE to make"),
                     ("se='ols'", "--se ols")):
        out = out.replace(api, cli)
    return out


_shown: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001
    """Warnings on the command line: one line each, in CLI words, no source line, each text
    once per command (the same warning can come from several layers: bins, bootstrap,
    references)."""
    text = cli_words(str(message))
    if text in _shown:
        return
    _shown.add(text)
    print(f"mcref: warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import warnings

    from ..core import _progress
    from ..core._warnings import MCRefWarning

    _shown.clear()
    import signal
    import threading

    from ._common import check_outputs

    handler = threading.current_thread() is threading.main_thread()
    old_handler = signal.signal(signal.SIGINT, _progress.sigint_handler) if handler else None
    _progress._SIGINT[0] = False
    try:
        check_outputs(args)  # nothing is computed before an output that cannot be written is refused
        # warning settings restored on return: main() may run inside a program or a test;
        # the command's --progress/--no-progress is the default of every library call below it
        with warnings.catch_warnings(), _progress.default(getattr(args, "progress", None)):
            warnings.simplefilter("default")
            warnings.simplefilter("always", MCRefWarning)  # said once each by _show_warning
            warnings.showwarning = _show_warning
            return args.func(args)
    except ValueError as exc:
        print(f"mcref: error: {cli_words(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `mcref validate ... | head`: the reader is gone, stop quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: send it nowhere
        return 0
    except OSError as exc:  # a file that vanished or a full disk while writing: one line, no traceback
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"mcref: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _progress.end_line()  # a bar interrupted while it was drawn
        # a study, bench or demo run: the runner has said what was kept and how to resume
        if args.command not in ("study", "bench") and not (args.command == "demo" and args.validate):
            print("mcref: interrupted", file=sys.stderr)
        return 130
    finally:
        _progress._SIGINT[0] = False
        if handler:
            signal.signal(signal.SIGINT, old_handler)
