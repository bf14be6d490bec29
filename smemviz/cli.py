"""The ``smemviz`` command: render, report and check layout files.

Exit status: 0 success (the layout fits), 1 the layout does not fit, 2 a bad
file or bad arguments, 3 an export that could not be written (no browser,
timeout, unwritable output). Errors go to stderr as one line,
``smemviz: error: FILE:LINE:COL: message``, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from . import __version__, hardware
from ._errors import CapacityError
from ._names import shown
from .layout_file import LayoutFileError, load_layout

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_DOES_NOT_FIT = 1
EXIT_BAD_INPUT = 2
EXIT_EXPORT_FAILED = 3

_WHICH = ("both", "smem", "tmem")
_EPILOG = (
    "FILE is a layout file (.toml or .json, see examples/) or a plan exported as .json. "
    "Exit status: 0 ok, 1 does not fit, 2 bad file or arguments, 3 export failed."
)


class _UsageError(Exception):
    """A problem with the command line itself (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints usage and exits 2; keep that, one style
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _arch(value: str) -> str:
    try:
        return hardware.get_arch(value).name
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def _positive_float(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value!r}") from None
    if not x > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return x


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="smemviz",
        description="Render, report and check SMEM/TMEM layouts of CuTe DSL kernels.",
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"smemviz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("file", metavar="FILE", help="layout file (.toml, .json) or exported plan (.json)")
        p.add_argument("--arch", type=_arch, help="architecture to check against, e.g. sm_90a, sm_100a "
                       "(default: the file's 'arch')")
        p.add_argument("--which", choices=_WHICH, default="both", help="memories to include (default: both)")

    render = sub.add_parser("render", help="draw the layout: .html .svg .png .pdf .json .md",
                            description="Write the layout diagram or data; the format follows OUT's extension.",
                            epilog=_EPILOG)
    common(render)
    render.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="output file: .html (interactive, offline), .svg/.png/.pdf (static), .json, .md")
    render.add_argument("--width", type=_positive_int, help="image width in pixels (static images)")
    render.add_argument("--height", type=_positive_int, help="image height in pixels (static images)")
    render.add_argument("--scale", type=_positive_float, default=1.0, help="pixel scale of static images")
    render.add_argument("--title", help="heading of the page (default: the file's 'name')")

    report = sub.add_parser("report", help="print the usage table", epilog=_EPILOG)
    common(report)
    report.add_argument("--format", choices=("text", "md", "json"), default="text",
                        help="text (default), md (Markdown) or json (the plan)")

    check = sub.add_parser("check", help="exit 1 if the layout does not fit the architecture",
                           description="Check the layout against an architecture's SMEM and TMEM capacity.",
                           epilog=_EPILOG)
    common(check)
    return parser


# -- loading ---------------------------------------------------------------------


def _load(file: str) -> Any:
    """A :class:`LayoutSpec`, or an ``(smem, tmem)`` pair read from an exported plan."""
    path = Path(file)
    if path.suffix.lower() == ".json" and path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except (OSError, ValueError, RecursionError):
            data = None  # load_layout reports it with the position
        if isinstance(data, dict) and "schema" in data:
            from ._export import read_plans

            try:
                return read_plans(text)
            except (ValueError, TypeError) as exc:
                raise LayoutFileError(str(exc), source=file) from None
    return load_layout(path)


def _plans(source: Any, args: argparse.Namespace) -> Any:
    """The file's layouts; what it cannot show (e.g. ``--which tmem`` of an SMEM-only
    file) is a usage error naming the file."""
    from ._inputs import as_layouts

    try:
        return as_layouts(source, which=args.which, arch=args.arch)
    except CapacityError:
        raise
    except ValueError as exc:
        raise _UsageError(f"{args.file}: {exc}") from None


# -- commands ----------------------------------------------------------------------


def _cmd_render(args: argparse.Namespace, source: Any, out: TextIO) -> int:
    from ._export import FORMATS, export

    target = Path(args.output)
    if target.suffix.lower() not in FORMATS:
        raise _UsageError(
            f"cannot write {args.output!r}: unknown extension {target.suffix or '(none)'!r}; "
            f"supported: {', '.join(FORMATS)}"
        )
    _plans(source, args)  # usage errors before any slow work
    written = export(
        source, target, arch=args.arch, which=args.which, width=args.width,
        height=args.height, scale=args.scale, title=args.title,
    )
    out.write(f"wrote {written} ({written.stat().st_size:,} bytes)\n")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace, source: Any, out: TextIO) -> int:
    from ._export._text import to_json, to_markdown

    pair = _plans(source, args)
    if args.format == "json":
        out.write(to_json(pair))
    elif args.format == "md":
        out.write(to_markdown(pair))
    else:
        if pair.title:
            out.write(f"{shown(pair.title)}\n\n")
        out.write("\n".join(p.report() for p in pair.plans))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace, source: Any, out: TextIO) -> int:
    pair = _plans(source, args)
    if pair.arch is None:
        raise _UsageError(f"{args.file}: no architecture to check against; pass --arch (e.g. --arch sm_100a) "
                          "or set 'arch' in the file")
    failed = 0
    for plan in pair.plans:
        result = plan.capacity(pair.arch)
        if result.fits:
            out.write(f"{shown(args.file)}: {result.message()}\n")
        else:
            failed += 1
            sys.stderr.write(f"smemviz: error: {shown(args.file)}: {result.message()}\n")
    return EXIT_DOES_NOT_FIT if failed else EXIT_OK


_COMMANDS = {"render": _cmd_render, "report": _cmd_report, "check": _cmd_check}


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"smemviz: error: {shown(message)}\n")  # one line, no control bytes
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        source = _load(args.file)
        return _COMMANDS[args.command](args, source, sys.stdout)
    except LayoutFileError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    except _UsageError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    except CapacityError as exc:  # e.g. TMEM beyond the 512 columns of a CTA
        return _fail(f"{args.file}: {exc}", EXIT_DOES_NOT_FIT)
    except ImportError as exc:  # an optional dependency of the export is missing
        return _fail(str(exc), EXIT_EXPORT_FAILED)
    except BrokenPipeError:  # e.g. `smemviz report FILE | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (RuntimeError, TimeoutError, OSError) as exc:  # no browser, render timeout, unwritable output
        return _fail(_describe_os_error(exc), EXIT_EXPORT_FAILED)
    except ValueError as exc:  # a value the export refused
        return _fail(str(exc), EXIT_BAD_INPUT)


def _describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
