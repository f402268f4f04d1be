"""``python -m dlsim.plot_command results.h5 [--out DIR] [--only NAME]...``: the plots of a results file as PNG.

``dlsim plot`` runs this. The plots are those of ``dlsim.plots.save_all`` for the file's kind;
they go to DIR (default: ``<stem>-plots/`` beside the file) and each written path is printed.
Exit codes: 0 written, 2 bad input (a missing, unreadable or non-dlsim file; bad arguments),
1 any other failure.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from typing import List, Optional


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlsim plot", description="Write every plot of a dlsim results file (HDF5) as PNG.")
    parser.add_argument("results", help="an HDF5 file written by `dlsim run`")
    parser.add_argument("--out", metavar="DIR", help="where to write the PNG files (default: <stem>-plots/ beside the file)")
    parser.add_argument("--only", metavar="NAME", action="append",
                        help="write only this plot (repeatable; 'gantt' picks every gantt-variant<i>)")
    return parser


def _read(path: pathlib.Path):
    """The results of ``path``; ValueError with a message naming the file when it cannot be read."""
    from .results import read_results

    if not path.exists():
        raise ValueError(f"{path}: no such file")
    if not path.is_file():
        raise ValueError(f"{path}: not a file")
    try:
        return read_results(str(path))
    except ValueError:
        raise
    except (OSError, KeyError) as e:
        raise ValueError(f"{path}: not a readable dlsim results file ({e})") from None


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)  # exits 2 on bad arguments
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    from . import plots

    path = pathlib.Path(args.results)
    try:
        results = _read(path)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.only:
        try:
            plots.check_plot_names(results, args.only)
        except ValueError as e:
            print(f"error: --only: {e}", file=sys.stderr)
            return 2
    out = pathlib.Path(args.out) if args.out else path.with_name(f"{path.stem}-plots")
    try:
        for written in plots.save_all(results, out, only=args.only):
            print(written, flush=True)
    except OSError as e:
        print(f"error: cannot write the plots to {out}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
