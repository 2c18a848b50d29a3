"""The ``pd2onnx`` command: info, convert, optimize, verify, ops.

Also accepts the flags of the ``paddle2onnx`` command (1.x and 2.x: ``--model_dir
--model_filename --params_filename --save_file --opset_version`` and the rest, short forms
included), so existing scripts only change the program name: each flag is honoured or, where
it has no meaning here, accepted with a one-line warning. Imports of heavy modules happen
inside the handlers (fast ``--help``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from pd2onnx._version import __version__
from pd2onnx.errors import InternalError, Pd2OnnxError, UsageError, internal_error

log = logging.getLogger("pd2onnx")

_P2O_FLAGS = ("--model_dir", "-m", "--model_filename", "-mf", "--params_filename", "-pf", "--save_file", "-s",
              "--opset_version", "-ov")


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected True or False, got {text!r}")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    p.add_argument("-q", "--quiet", action="store_true", help="only errors")
    p.add_argument("--debug", action="store_true", help="show tracebacks of errors")


def _parse_input_shapes(items: list[str] | None) -> dict[str, list] | None:
    if not items:
        return None
    shapes: dict[str, list] = {}
    for item in items:
        name, sep, dims = item.rpartition(":")
        if not sep or not name:
            raise UsageError(f"--input-shape {item!r}: expected NAME:D0,D1,... (e.g. x:1,3,224,224)")
        parsed: list = []
        for d in dims.split(","):
            d = d.strip()
            if d.lstrip("-").isdigit():
                parsed.append(int(d))
            elif d in ("?", ""):
                parsed.append(None)
            else:
                parsed.append(d)  # a symbolic dim name
        shapes[name] = parsed
    return shapes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pd2onnx",
        description="Convert PaddlePaddle inference models to ONNX, and optimize ONNX models.",
    )
    parser.add_argument("--version", action="version", version=f"pd2onnx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("convert", help="convert Paddle models to ONNX",
                       description="Convert a Paddle model to an .onnx file or a deployment folder; several "
                       "models (or --recursive) to one folder each under -o OUTROOT/.")
    p.add_argument("model", nargs="+", help="model folder, .json/.pdmodel file, or path prefix (several: one "
                   "output folder each under -o)")
    p.add_argument("-o", "--output",
                   help="output .onnx file (default: MODEL with .onnx); or a folder (an existing one, or a path "
                   "ending in /): FOLDER/<stem>.onnx plus the deployment configs beside the model")
    p.add_argument("--no-copy-configs", action="store_true",
                   help="output folder: write the .onnx only, copy no deployment configs")
    p.add_argument("--overwrite", action="store_true", help="output folder: replace files that exist there")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="convert every model folder under MODEL into the same tree under -o OUTROOT/")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="several models: convert N at a time, each in its own process (0: one per CPU)")
    p.add_argument("--params", help="params file (default: the .pdiparams beside the model)")
    p.add_argument("--opset", type=int, help="target ONNX opset (default 17)")
    p.add_argument("--no-auto-opset", action="store_true", help="fail instead of raising the opset when an op needs more")
    p.add_argument("--no-optimize", action="store_true", help="skip the ONNX optimizer")
    p.add_argument("--fp16", action="store_true", help="convert weights and compute to float16")
    p.add_argument("--keep-io-types", action="store_true", help="with --fp16: keep float32 inputs/outputs")
    p.add_argument("--input-shape", action="append", metavar="NAME:DIMS", help="fix an input shape, e.g. x:1,3,224,224")
    p.add_argument("--fold-qdq", action="store_true",
                   help="quantized models: fold Q/DQ into float weights (a float model; default keeps int8 QDQ)")
    p.add_argument("--check", action="store_true", help="run onnx.checker (full) on the result")
    p.add_argument("--strip-provenance", action="store_true",
                   help="leave out the record of which Paddle op each node came from (used by verify)")
    _add_common(p)

    p = sub.add_parser("info", help="describe a Paddle model (no conversion)")
    p.add_argument("model")
    p.add_argument("--params", help="params file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _add_common(p)

    p = sub.add_parser("ops", help="list supported operators with their minimum opsets")
    p.add_argument("--json", action="store_true")
    _add_common(p)

    p = sub.add_parser("verify", help="compare ONNX Runtime with Paddle on the same inputs; find the op that differs",
                       description="Compare ONNX Runtime with Paddle on the same inputs. --locate finds the first "
                                   "op whose output leaves the tolerance; --replay runs each op's ONNX nodes on "
                                   "Paddle's own input values. Verdict: match (exit 0), amplified (exit 0: the "
                                   "outputs differ but every op replays within tolerance), mismatch (exit 3), "
                                   "unexplained (exit 4: an op that could not be replayed may explain the "
                                   "difference), paddle-wrong (exit 0: Paddle itself computes an op wrongly). "
                                   "See docs/verify.md.")
    p.add_argument("model", help="the Paddle model")
    p.add_argument("--onnx", help="converted model (default: convert now)")
    p.add_argument("--params", help="params file")
    p.add_argument("--inputs", help=".npz with one array per model input (by input name); a legacy LoD "
                        "input's sequence lengths as '<input>.lod' (default: one sequence)")
    p.add_argument("--opset", type=int, help="opset when converting now")
    p.add_argument("--no-optimize", action="store_true",
                   help="when converting now: skip the optimizer (so that every op keeps its own nodes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=1, help="size for dynamic dims of random inputs")
    p.add_argument("--rtol", type=float, default=1e-4, help="tolerance relative to each value's range")
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--locate", action="store_true", help="compare every intermediate value; name the first op out "
                                                         "of tolerance and its inputs' errors")
    p.add_argument("--replay", action="store_true", help="run each op's ONNX nodes on Paddle's own inputs and "
                                                         "compare with Paddle's outputs")
    p.add_argument("--json", metavar="FILE", help="write the whole report as JSON")
    p.add_argument("--html", metavar="FILE", help="write the report as one self-contained page: each op's error "
                                                  "along the program, the referee's figures")
    p.add_argument("--runtime", choices=["onnxruntime", "openvino"], default="onnxruntime",
                   help="what computes the ONNX side (openvino: its CPU plugin, float32 precision hint)")
    p.add_argument("--all-ops", action="store_true", help="print every op's errors, not only those out of tolerance")
    p.add_argument("--paddle-python", metavar="PYTHON",
                   help="interpreter that runs Paddle for --locate/--replay (default: this one)")
    _add_common(p)

    p = sub.add_parser("optimize", help="optimize any ONNX model")
    try:
        from pd2onnx.optimize.command import add_arguments
    except ImportError:  # the optimizer package is optional at build time
        add_arguments = None
    if add_arguments is not None:
        add_arguments(p)
    _add_common(p)
    return parser


def _p2o_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pd2onnx", description="paddle2onnx-compatible flags (docs/paddle2onnx.md)")
    p.add_argument("--model_dir", "-m", help="model directory (or a model file / path prefix)")
    p.add_argument("--model_filename", "-mf", help="program file inside --model_dir")
    p.add_argument("--params_filename", "-pf",
                   help="combined params file inside --model_dir; without it, --model_filename means "
                        "one file per parameter (Paddle2ONNX 1.x)")
    p.add_argument("--save_file", "-s", help="output .onnx file")
    p.add_argument("--opset_version", "-ov", type=int, help="target opset (default: pd2onnx's, 17)")
    p.add_argument("--enable_auto_update_opset", type=_bool, default=True)
    p.add_argument("--enable_onnx_checker", type=_bool, default=True)
    p.add_argument("--enable_optimize", "--enable_optimization", dest="enable_optimize", type=_bool, default=True)
    p.add_argument("--optimize_tool", default="polygraphy")
    p.add_argument("--export_fp16_model", type=_bool, default=False)
    p.add_argument("--external_filename", help="write the weights as ONNX external data to this file (beside --save_file)")
    p.add_argument("--custom_ops", default="{}", help='e.g. \'{"paddle_op": "onnx_op"}\'')
    p.add_argument("--deploy_backend", "-d", default="onnxruntime")
    p.add_argument("--save_calibration_file", default="")
    p.add_argument("--enable_dev_version", type=_bool, default=None)
    p.add_argument("--enable_paddle_fallback", type=_bool, default=None)
    p.add_argument("--enable_dist_prim_all", type=_bool, default=False)
    p.add_argument("--enable_verbose", type=_bool, default=False)
    p.add_argument("--version", action="version", version=f"pd2onnx {__version__}")
    _add_common(p)
    return p


def _parse_custom_ops(text: str) -> dict[str, str]:
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise UsageError(f"--custom_ops {text!r}: expected a dict of Paddle op -> ONNX op names, "
                         'e.g. \'{"paddle_op": "onnx_op"}\'')
    return value


def _setup_logging(args: argparse.Namespace) -> None:
    from pd2onnx.progress import LogHandler

    level = logging.WARNING
    if getattr(args, "quiet", False):
        level = logging.ERROR
    elif getattr(args, "verbose", 0) >= 2:
        level = logging.DEBUG
    elif getattr(args, "verbose", 0) == 1:
        level = logging.INFO
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s", handlers=[LogHandler()])


def _convert_options(args: argparse.Namespace) -> dict:
    return {
        "opset": args.opset,
        "auto_opset": not args.no_auto_opset,
        "optimize": not args.no_optimize,
        "fp16": args.fp16,
        "keep_io_types": args.keep_io_types,
        "input_shapes": _parse_input_shapes(args.input_shape),
        "fold_qdq": args.fold_qdq,
        "strip_provenance": args.strip_provenance,
    }


def _show_progress(args: argparse.Namespace) -> bool:
    from pd2onnx import progress

    return progress.wanted() and not args.quiet


def _cmd_convert(args: argparse.Namespace) -> int:
    from pd2onnx import progress
    from pd2onnx.deploy import is_folder_target

    if args.jobs < 0:
        raise UsageError(f"-j {args.jobs}: expected a number of processes (0: one per CPU)")
    if len(args.model) > 1 or args.recursive:
        return _convert_many(args)
    model = args.model[0]
    with progress.display(f"converting {model}", enabled=_show_progress(args)):
        if args.output and is_folder_target(args.output):
            return _convert_to_folder(args, model)
        return _convert_to_file(args, model)


def _convert_to_file(args: argparse.Namespace, model_path: str) -> int:
    from pd2onnx.api import check, convert
    from pd2onnx.onnx_io import check_writable, save_model

    for flag, used in (("--no-copy-configs", args.no_copy_configs), ("-j", args.jobs != 1)):
        if used:
            log.warning("%s has no effect when converting one model to a file (it applies to output folders "
                        "and several models)", flag)
    output = args.output or (os.path.splitext(model_path.rstrip("/"))[0] + ".onnx")
    check_writable(output)
    model = convert(model_path, args.params, **_convert_options(args))
    if args.check:
        check(model)
    files = save_model(model, output)
    nodes = sum(1 for _ in model.graph.all_nodes())
    print(f"wrote {', '.join(files)} (opset {model.opset_imports['']}, {nodes} nodes)")
    return 0


def _convert_to_folder(args: argparse.Namespace, model_path: str) -> int:
    from pd2onnx.deploy import export_folder, shown_path

    if args.jobs != 1:
        log.warning("-j has no effect when converting one model")
    result = export_folder(model_path, args.output, args.params, copy_configs=not args.no_copy_configs,
                           overwrite=args.overwrite, check=args.check, **_convert_options(args))
    configs = f"; copied {', '.join(result.configs)}" if result.configs else ""
    print(f"wrote {shown_path(result.onnx_file)} (opset {result.opset}, {result.nodes} nodes){configs}")
    return 0


def _convert_many(args: argparse.Namespace) -> int:
    from pd2onnx import progress
    from pd2onnx.batch import plan_jobs, run_jobs
    from pd2onnx.deploy import is_folder_target

    if not args.output:
        raise UsageError("several models (or --recursive) need -o OUTROOT/: each model gets its own folder there")
    if os.path.exists(args.output) and not is_folder_target(args.output):
        raise UsageError("several models (or --recursive) are written into a folder, not a file", file=args.output,
                         hint="pass -o OUTROOT/ (a folder)")
    if args.params:
        raise UsageError("--params names the weights of one model; with several models each is found beside "
                         "its program")
    jobs = plan_jobs(args.model, args.output, args.recursive)
    options = {"copy_configs": not args.no_copy_configs, "overwrite": args.overwrite, "check": args.check,
               **_convert_options(args)}
    workers = args.jobs or os.cpu_count() or 1
    with progress.display(f"converting {len(jobs)} models", enabled=_show_progress(args)):
        outcomes = run_jobs(jobs, options, workers)
    failed = sum(not o.ok for o in outcomes)
    print(f"{len(outcomes) - failed} of {len(outcomes)} models converted" + (f", {failed} failed" if failed else ""))
    return 1 if failed else 0


def _cmd_p2o(argv: list[str]) -> int:
    import warnings

    from pd2onnx import progress
    from pd2onnx.api import export, no_effect_notes

    parser = _p2o_parser()
    args = parser.parse_args(argv)
    if args.model_dir is None or args.save_file is None:
        parser.error("--model_dir and --save_file are required")
    if args.enable_verbose and not args.verbose:
        args.verbose = 1
    _setup_logging(args)
    notes = no_effect_notes({"dist_prim_all": args.enable_dist_prim_all, "deploy_backend": args.deploy_backend,
                             "calibration_file": args.save_calibration_file, "optimize_tool": args.optimize_tool})
    for flag in ("enable_dev_version", "enable_paddle_fallback"):
        if getattr(args, flag) is not None:
            notes.append(f"--{flag} (pd2onnx has a single converter and no Paddle fallback)")
    for note in notes:
        log.warning("no effect in pd2onnx: %s", note.replace("calibration_file=", "--save_calibration_file=", 1))
    model_file = os.path.join(args.model_dir, args.model_filename) if args.model_filename else args.model_dir
    if args.params_filename:
        params = os.path.join(args.model_dir, args.params_filename)
    elif args.model_filename and os.path.isdir(args.model_dir):
        params = args.model_dir  # Paddle2ONNX 1.x: no params file means one file per parameter
    else:
        params = None
    out_dir = os.path.dirname(os.path.abspath(args.save_file))
    os.makedirs(out_dir, exist_ok=True)  # as paddle2onnx does
    with warnings.catch_warnings(), progress.display(f"converting {model_file}", enabled=_show_progress(args)):
        warnings.simplefilter("ignore")  # the no-effect notes were logged above
        export(model_file, params, args.save_file, args.opset_version,
               auto_upgrade_opset=args.enable_auto_update_opset, enable_onnx_checker=args.enable_onnx_checker,
               enable_optimize=args.enable_optimize, custom_op_info=_parse_custom_ops(args.custom_ops) or None,
               external_file=args.external_filename or "", export_fp16_model=args.export_fp16_model)
    print(f"wrote {args.save_file}")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from pd2onnx.paddle import load
    from pd2onnx.paddle.info import describe, format_description

    desc = describe(load(args.model, args.params))
    print(json.dumps(desc, indent=2) if args.json else format_description(desc))
    return 0


def _cmd_ops(args: argparse.Namespace) -> int:
    from pd2onnx.convert.support import format_ops_markdown, supported_ops

    rows = supported_ops()
    print(json.dumps(rows, indent=2) if args.json else format_ops_markdown(rows))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from pd2onnx.onnx_io import check_writable
    from pd2onnx.verification import format_report, verify

    for path in (args.json, args.html):
        if path:
            check_writable(path)
    report = verify(args.model, onnx_file=args.onnx, params_file=args.params, inputs_file=args.inputs,
                    opset=args.opset, seed=args.seed, batch=args.batch, locate=args.locate, replay=args.replay,
                    rtol=args.rtol, atol=args.atol, optimize=not args.no_optimize, paddle_python=args.paddle_python,
                    runtime=args.runtime)
    print(format_report(report, every_op=args.all_ops))
    if args.json:
        report.write_json(args.json)
    if args.html:
        from pd2onnx.verification.html_report import write_html

        write_html(report, args.html)
    return report.exit_code


def _cmd_optimize(args: argparse.Namespace) -> int:
    from pd2onnx.optimize.command import run

    return run(args)


HANDLERS = {"convert": _cmd_convert, "info": _cmd_info, "ops": _cmd_ops, "verify": _cmd_verify,
            "optimize": _cmd_optimize}


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code. Called as the process's entry (``argv`` None:
    the ``pd2onnx`` script, ``python -m pd2onnx``), a finished command other than ``verify``
    ends the process at once (``_exit_now``)."""
    entry = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    code = _main(argv)
    if entry and "verify" not in argv[:1] and sys.getprofile() is None and sys.gettrace() is None:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown: freeing every module and object of
    numpy, onnx and onnx_ir one by one costs ~0.05 s of CPU, a seventh of converting a small
    model, and nothing needs it. What must happen at exit still does: the ``atexit`` handlers
    (logging's flush, ``weakref.finalize`` clean-ups such as temporary folders, multiprocessing),
    then the standard streams are flushed. Not under a profiler or tracer (cProfile, coverage
    write their results at teardown), and not for ``verify`` (Paddle and the runtimes it loads
    may rely on their destructors)."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a pipe whose reader has gone
            pass
    os._exit(code)


def _main(argv: list[str]) -> int:
    debug = "--debug" in argv
    try:
        if argv and argv[0].startswith("-") and any(a.split("=")[0] in _P2O_FLAGS for a in argv):
            return _cmd_p2o(argv)
        parser = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 1
        _setup_logging(args)
        return HANDLERS[args.command](args)
    except InternalError as exc:
        if debug:
            raise
        print(f"pd2onnx: {exc}", file=sys.stderr)
        return exc.exit_code
    except Pd2OnnxError as exc:
        if debug:
            raise
        print(f"pd2onnx: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("pd2onnx: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 0
    except Exception as exc:  # a pd2onnx bug: one line naming where, the traceback with --debug
        if debug:
            raise
        error = internal_error(exc, on=_subject(argv))
        print(f"pd2onnx: {error}", file=sys.stderr)
        return error.exit_code


def _subject(argv: list[str]) -> str:
    """What the command works on, for an internal error's message: its first file argument."""
    for i, arg in enumerate(argv):
        if arg in ("--model_dir", "-m") and i + 1 < len(argv):
            return argv[i + 1]
        if i and not arg.startswith("-") and not argv[i - 1].startswith("-") and os.path.exists(arg):
            return arg
    return "the model"


if __name__ == "__main__":
    sys.exit(main())
