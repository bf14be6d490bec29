"""The ``smemviz`` command: render, report and check layout files.

Exit status: 0 success (the layout fits), 1 the layout does not fit, 2 a bad
file or bad arguments, 3 an export that could not be written (no browser,
timeout, unwritable output). Errors go to stderr as one line,
``smemviz: error: FILE:LINE:COL: message``, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from . import __version__, device, hardware
from ._errors import CapacityError
from ._names import shown
from .analysis import lint, occupancy, text_report
from .sources.layout_file import LayoutFileError, load_layout

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_DOES_NOT_FIT = 1
EXIT_BAD_INPUT = 2
EXIT_EXPORT_FAILED = 3

_WHICH = ("both", "smem", "tmem")
_EPILOG = (
    "FILE is a layout file (.toml or .json, see examples/), a plan exported as .json, or "
    "MODULE:NAME, a @cute.struct class (or a function returning one, or an allocator) in an importable module. "
    "Exit status: 0 ok, 1 does not fit or breaks a lint rule, 2 bad file or arguments, 3 export failed."
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
        p.add_argument(
            "file",
            metavar="FILE",
            help="layout file (.toml, .json), exported plan (.json) or MODULE:NAME of a @cute.struct",
        )
        p.add_argument(
            "--arch",
            type=_arch,
            help="architecture to check against, e.g. sm_90a, sm_100a "
            "(default: the file's 'arch', else $CUTE_DSL_ARCH, else the GPU present)",
        )
        p.add_argument("--which", choices=_WHICH, default="both", help="memories to include (default: both)")

    render = sub.add_parser(
        "render",
        help="draw the layout: .html .svg .png .pdf .json .md",
        description="Write the layout diagram or data; the format follows OUT's extension.",
        epilog=_EPILOG,
    )
    common(render)
    render.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="output file: .html (interactive, offline), .svg/.png/.pdf (static), .json, .md",
    )
    render.add_argument("--width", type=_positive_int, help="image width in pixels (static images)")
    render.add_argument("--height", type=_positive_int, help="image height in pixels (static images)")
    render.add_argument("--scale", type=_positive_float, default=1.0, help="pixel scale of static images")
    render.add_argument("--title", help="heading of the page (default: the file's 'name')")
    render.add_argument(
        "--lifetimes",
        action="store_true",
        help="draw the lifetime map (steps x addresses) of a layout with steps and live keys",
    )
    render.add_argument(
        "--banks",
        action="store_true",
        help="draw the bank pictures of the layout's access keys (static images; an HTML page "
        "adds them under the map anyway)",
    )

    report = sub.add_parser("report", help="print the usage table", epilog=_EPILOG)
    common(report)
    report.add_argument(
        "--format",
        choices=("text", "md", "json"),
        default="text",
        help="text (default), md (Markdown) or json (the plan)",
    )
    occupancy_options(report)

    check = sub.add_parser(
        "check",
        help="exit 1 if the layout (or a captured kernel) does not fit or breaks a rule",
        description="Check the layout against an architecture's SMEM and TMEM capacity "
        "and the lint rules (docs/lint.md); print the occupancy. FILE.py:FUNCTION captures "
        "the kernel FUNCTION compiles and checks it as well, its ordering included: every "
        "finding is printed, and every alias with the edge that orders it (docs/ordering.md).",
        epilog=_EPILOG,
    )
    common(check)
    check.add_argument("--strict", action="store_true", help="exit 1 on lint warnings too")
    check.add_argument("--kernel", help="FILE.py:FUNCTION only: which kernel, when it compiles several")
    occupancy_options(check)
    capture_options(sub)
    profile_options(sub)
    return parser


def profile_options(sub: Any) -> None:
    p = sub.add_parser(
        "profile",
        help="launch a kernel once under Nsight Compute and put its shared-memory counters on the captured map",
        description="Call FUNCTION from FILE.py under capture (it compiles the kernel and returns a callable "
        "that launches it once on real tensors), launch that once under ncu (line info on, source counters), "
        "and print every shared-memory SASS row attributed to the captured access and region it touches, "
        "ncu's instructions, wavefronts, ideal and excessive wavefronts beside smemviz's prediction "
        "(docs/ncu.md). Needs a GPU and Nsight Compute.",
        epilog="Exit status: 0 every row attributed and every modelled count as predicted, 1 a row not "
        "attributed or a count that disagrees, 2 bad FILE.py:FUNCTION or arguments, 3 ncu missing or failed.",
    )
    p.add_argument(
        "target", metavar="FILE.py:FUNCTION", help="compiles the kernel, returns a callable that launches it"
    )
    p.add_argument("--arch", type=_arch, help="architecture of the capture (default: $CUTE_DSL_ARCH, else the GPU)")
    p.add_argument("--kernel", help="which kernel, when the function compiles several (part of its symbol)")
    p.add_argument("--ncu", metavar="PATH", help="the ncu to run (default: the one on PATH)")
    p.add_argument("--csv", metavar="OUT", help="also write ncu's source page (CSV) to OUT")
    p.add_argument("--json", action="store_true", help="print the attribution as JSON instead of text")
    p.add_argument(
        "--out",
        "-o",
        metavar="OUT",
        help="also write the captured map with the counts on it: .html .md .json .svg .png .pdf",
    )


def capture_options(sub: Any) -> None:
    p = sub.add_parser(
        "capture",
        help="compile a kernel and show its SMEM/TMEM as the compiler lays it out",
        description="Call FUNCTION from FILE.py (it builds and compiles a CuTe DSL kernel, e.g. "
        "with fake tensors) and capture every allocation it makes through "
        "cutlass.memory's allocators; print the plan or write it to --out.",
        epilog="Exit status: 0 captured, 1 the kernel raised or cannot be captured, or its layout "
        "does not fit or breaks a lint rule (docs/lint.md), 2 bad FILE.py:FUNCTION or arguments, 3 export failed.",
    )
    p.add_argument("target", metavar="FILE.py:FUNCTION", help="the function that builds and compiles the kernel")
    p.add_argument("--out", "-o", metavar="OUT", help="write the map: .json .svg .html .png .pdf .md")
    p.add_argument("--arch", type=_arch, help="architecture to judge capacity against (default: $CUTE_DSL_ARCH)")
    p.add_argument("--kernel", help="which kernel, when the function compiles several (part of its symbol)")
    p.add_argument("--strict", action="store_true", help="exit 1 on lint warnings too")
    p.add_argument(
        "--no-lint", action="store_true", help="exit 0 whatever the lint rules find (the findings are still shown)"
    )


def occupancy_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=_positive_int, help="threads per CTA, for the occupancy")
    p.add_argument("--registers", type=_positive_int, help="registers per thread, for the occupancy (needs --threads)")
    p.add_argument(
        "--cluster", type=_positive_int, help="CTAs per cluster: the occupancy adds the clusters active at once (sm_90)"
    )
    p.add_argument(
        "--tmem-columns", type=_positive_int, help="TMEM columns per CTA: the CTAs per SM that hold theirs (Blackwell)"
    )


# -- loading ---------------------------------------------------------------------


_PYTHON_NAME = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def _load_python(target: str) -> Any:
    """The object ``MODULE:NAME`` names (the current folder importable); a function is called."""
    module_name, _, attr = target.partition(":")
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise LayoutFileError(f"cannot import {module_name!r}: {exc}", source=target) from None
    except Exception as exc:  # the module's own code failed
        raise LayoutFileError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}", source=target) from None
    finally:
        if added:
            sys.path.remove(os.getcwd())
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise LayoutFileError(f"{module_name} has no attribute {attr!r}", source=target)
        obj = getattr(obj, part)
    from .sources._struct import is_cute_struct

    if inspect.isfunction(obj) and not is_cute_struct(obj):
        obj = obj()
    return obj


def _load(file: str) -> Any:
    """A :class:`LayoutSpec`, an ``(smem, tmem)`` pair read from an exported plan, or
    the object ``MODULE:NAME`` names."""
    path = Path(file)
    if _PYTHON_NAME.match(file) and not path.exists():
        return _load_python(file)
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
    from .sources._inputs import as_layouts

    try:
        return as_layouts(source, which=args.which, arch=args.arch)
    except CapacityError:
        raise
    except ValueError as exc:
        raise _UsageError(f"{args.file}: {exc}") from None


# -- commands ----------------------------------------------------------------------


def _cmd_render(args: argparse.Namespace, source: Any, out: TextIO) -> int:
    from ._export import EXPORT_FORMATS, export

    target = Path(args.output)
    if target.suffix.lower() not in EXPORT_FORMATS:
        raise _UsageError(
            f"cannot write {args.output!r}: unknown extension {target.suffix or '(none)'!r}; "
            f"supported: {', '.join(EXPORT_FORMATS)}"
        )
    pair = _plans(source, args)  # usage errors before any slow work
    figure = _lifetime_figure(pair, args) if args.lifetimes else None
    if args.banks and (args.lifetimes or pair.smem is None or not pair.smem.accesses):
        raise _UsageError(
            f"{args.file}: --banks needs an SMEM layout with access keys"
            + (", and not --lifetimes" if args.lifetimes else "")
        )
    written = export(
        source,
        target,
        arch=args.arch,
        which=args.which,
        width=args.width,
        height=args.height,
        scale=args.scale,
        title=args.title,
        figure=figure,
        banks=True if args.banks else None,
    )
    out.write(f"wrote {written} ({written.stat().st_size:,} bytes)\n")
    return EXIT_OK


def _lifetime_figure(pair: Any, args: argparse.Namespace) -> Any:
    """The lifetime map of the first plan with steps (SMEM, then TMEM)."""
    plan = next((p for p in (pair.smem, pair.tmem) if p is not None and p.steps), None)
    if plan is None:
        raise _UsageError(f"{args.file}: --lifetimes needs a layout with steps and live keys")
    from .figures import lifetime_figure

    return lifetime_figure(plan, arch=args.arch)


def _occupancy_lines(args: argparse.Namespace, plans: Any, arch: str | None) -> list[str]:
    lines = []
    for plan in plans:
        occ = occupancy(
            plan,
            arch,
            threads=args.threads,
            registers=args.registers,
            cluster=args.cluster,
            tmem_columns=args.tmem_columns,
        )
        if occ is not None:
            lines.append(f"occupancy {occ.message()}")
    return lines


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
        out.write("\n".join(text_report(p) for p in pair.plans))
        if args.threads:
            for line in _occupancy_lines(args, pair.plans, pair.arch):
                out.write(f"  {line}\n")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace, source: Any, out: TextIO) -> int:
    pair = _plans(source, args)
    arch = pair.arch
    if arch is None:
        found = device.detect_arch()
        arch = found[0].name if found else None
    if arch is None:
        raise _UsageError(
            f"{args.file}: no architecture to check against; pass --arch (e.g. --arch sm_100a), "
            "set 'arch' in the file or $CUTE_DSL_ARCH"
        )
    failed = 0
    for plan in pair.plans:
        result = plan.capacity(arch)
        if result.fits:
            out.write(f"{shown(args.file)}: {result.message()}\n")
        else:
            failed += 1
            sys.stderr.write(f"smemviz: error: {shown(args.file)}: {result.message()}\n")
        for finding in lint(plan, arch, ignore=("capacity",)):
            bad = finding.severity == "error" or (args.strict and finding.severity == "warning")
            failed += bad
            (sys.stderr if bad else out).write(f"{shown(args.file)}: {shown(finding.line())}\n")
    for line in _occupancy_lines(args, pair.plans, arch):
        out.write(f"{shown(args.file)}: {line}\n")
    return EXIT_DOES_NOT_FIT if failed else EXIT_OK


_COMMANDS = {"render": _cmd_render, "report": _cmd_report, "check": _cmd_check}


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"smemviz: error: {shown(message)}\n")  # one line, no control bytes
    return code


# a capture target, FILE.py:FUNCTION (a layout file or MODULE:NAME never ends its path in .py)
_KERNEL_TARGET = re.compile(r"^.+\.py:[A-Za-z_][\w.]*$")


def _captured(target: str, arch: str | None, kernel: str | None) -> Any:
    """The plans of the kernel ``FILE.py:FUNCTION`` compiles, captured; or the exit status
    (an int) once the reason is on stderr."""
    from .sources.capture import CaptureError
    from .sources.capture._cli import CaptureTargetError, capture_call, load_function, pick

    try:
        fn = load_function(target)
    except CaptureTargetError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    try:
        return pick(capture_call(fn, arch), kernel)
    except CaptureError as exc:
        return _fail(f"{target}: {exc}", EXIT_DOES_NOT_FIT)
    except Exception as exc:  # the kernel's own error while tracing: shown as it is, no plan
        return _fail(f"{target} raised {type(exc).__name__}: {exc}", EXIT_DOES_NOT_FIT)


def _cmd_check_kernel(args: argparse.Namespace, out: TextIO) -> int:
    """``smemviz check FILE.py:FUNCTION``: capture the kernel, then print its capacity, every
    finding (ordering included, infos too) and every alias with its edge; errors (and, with
    ``--strict``, warnings) go to stderr and exit 1."""
    layouts = _captured(args.file, args.arch, args.kernel)
    if isinstance(layouts, int):
        return layouts
    from .analysis import analyse

    name = shown(args.file)
    failed = 0
    for plan in layouts:
        if plan.resolved_arch(args.arch) is None:
            return _fail(f"{name}: no architecture to check against; pass --arch (e.g. --arch sm_90a)", EXIT_BAD_INPUT)
        an = analyse(plan, args.arch)  # one analysis: capacity, lint and the ordering check
        failed += not an.capacity.fits
        (out if an.capacity.fits else sys.stderr).write(f"{name}: {shown(an.capacity.message())}\n")
        for finding in an.beyond_capacity:
            bad = finding.severity == "error" or (args.strict and finding.severity == "warning")
            failed += bad
            (sys.stderr if bad else out).write(f"{name}: {shown(finding.line())}\n")
        for alias in an.ordering.aliases if an.ordering is not None else ():
            out.write(f"{name}: alias {shown(alias.line())}\n")
    return EXIT_DOES_NOT_FIT if failed else EXIT_OK


def _cmd_capture(args: argparse.Namespace, out: TextIO) -> int:
    """``smemviz capture FILE.py:FUNCTION``: its own loading (a Python file, not a layout)."""
    layouts = _captured(args.target, args.arch, args.kernel)
    if isinstance(layouts, int):
        return layouts
    from .analysis import analyse

    judged = [analyse(p, args.arch) for p in layouts]
    if args.out is None:
        out.write("\n".join(text_report(an) for an in judged) + "\n")
    else:
        from ._export import export

        written = export(layouts, Path(args.out), arch=args.arch)
        out.write(f"wrote {written} ({written.stat().st_size:,} bytes)\n")
    return _capture_verdict(args, judged, out, shown_in_report=args.out is None)


def _cmd_profile(args: argparse.Namespace, out: TextIO) -> int:
    """``smemviz profile FILE.py:FUNCTION``: capture, launch once under ncu, attribute, print."""
    from .analysis.ncu._profile import ProfileError, profile_capture
    from .sources.capture import CaptureError
    from .sources.capture._cli import CaptureTargetError

    try:
        kc, res = profile_capture(args.target, arch=args.arch, kernel=args.kernel, ncu=args.ncu, keep_csv=args.csv)
    except (CaptureTargetError, TypeError) as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    except CaptureError as exc:
        return _fail(f"{args.target}: {exc}", EXIT_DOES_NOT_FIT)
    except (ProfileError, OSError, subprocess.TimeoutExpired) as exc:
        return _fail(str(exc), EXIT_EXPORT_FAILED)
    out.write(json.dumps(res.to_dict(), indent=2) + "\n" if args.json else res.text())
    if args.out is not None:
        from ._export import export

        try:
            written = export(kc.plan, Path(args.out), arch=args.arch, measured=res)
        except (RuntimeError, TimeoutError, OSError, ValueError) as exc:
            return _fail(_describe_os_error(exc), EXIT_EXPORT_FAILED)
        (sys.stderr if args.json else out).write(f"wrote {written} ({written.stat().st_size:,} bytes)\n")
    return EXIT_OK if res.agrees and not res.unattributed else EXIT_DOES_NOT_FIT


def _capture_verdict(args: argparse.Namespace, judged: list[Any], out: TextIO, *, shown_in_report: bool) -> int:
    """Exit 1 when a captured layout breaks a lint rule (over capacity included), as ``check``
    does: errors always, warnings with ``--strict``, nothing with ``--no-lint``. The findings
    that fail it go to stderr; the others, when the report above did not show them, to ``out``."""
    failed = 0
    for an in judged:
        for finding in an.findings:
            bad = not args.no_lint and (finding.severity == "error" or (args.strict and finding.severity == "warning"))
            failed += bad
            if bad:
                sys.stderr.write(f"smemviz: error: {shown(args.target)}: {shown(finding.line())}\n")
            elif not shown_in_report and finding.severity != "info":
                out.write(f"{shown(args.target)}: {shown(finding.line())}\n")
    return EXIT_DOES_NOT_FIT if failed else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    if argv is None and args.command in ("render", "capture"):
        # the command line itself: static images come from a browser kept warm between
        # commands (smemviz/_export/_render_service.py) instead of one started each time
        from ._export._render_service import use_render_service

        use_render_service()
    if args.command == "check" and _KERNEL_TARGET.match(args.file):
        return _cmd_check_kernel(args, sys.stdout)
    if args.command == "profile":
        return _cmd_profile(args, sys.stdout)
    if args.command == "capture":
        try:
            return _cmd_capture(args, sys.stdout)
        except (RuntimeError, TimeoutError, OSError) as exc:  # no browser, render timeout, unwritable output
            return _fail(_describe_os_error(exc), EXIT_EXPORT_FAILED)
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
