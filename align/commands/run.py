"""`align run`: sample a mechanism with the reference interpreter, replay one execution, or test its alignment.

Exit codes: 0 success; 1 the alignment fails (a failing sample of --check-alignment, or a replay with --aligned
that breaks an obligation); 2 usage, input, parse, type or runtime error.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..diagnostics import ExitCode, SpecError, diag, os_reason
from ..files import read_bytes
from ..pipeline import read, resolve_source, select
from ..render import Renderer
from ..results import SampleRun
from . import UsageError, file_name, options

if TYPE_CHECKING:
    from ..resolve import ResolvedMechanism

DESCRIPTION = (
    "Run a mechanism with the reference interpreter. By default: draw --samples executions and summarise the "
    "outputs (frequencies of the discrete outputs, quantiles of the real parts); --format json prints every "
    "sample's output. With --noise/--noise-file: replay one execution and print its trace; add --aligned and "
    "--neighbour to also apply the alignment and replay M(D', φ(H)) next to it. With --check-alignment and "
    "--neighbour: test the alignment on --samples executions and report counterexamples (exit 1 if any).")


def add_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("file", metavar="FILE.dp")
    run.add_argument("--mechanism", metavar="NAME", help="the mechanism to run, when the file defines several")
    run.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                     help="a parameter's value on D: a JSON number, boolean or list, or an exact expression such as "
                          "1/3 (repeatable)")
    run.add_argument("--samples", type=options.SAMPLES, default=10000, metavar="N",
                     help="number of executions (default 10000)")
    run.add_argument("--seed", type=options.SEED, default=0, metavar="S", help="seed of the run (default 0)")
    run.add_argument("--chunk-size", type=options.CHUNK_SIZE, default=None, metavar="C",
                     help="executions evaluated together (rounded up to a multiple of 16384; default 131072); "
                          "the results do not depend on it")
    run.add_argument("--noise", action="append", default=[], metavar="NAME=VALUE",
                     help="replay: a noise value (a family takes a list with a value or null per loop index)")
    run.add_argument("--noise-file", metavar="FILE.json",
                     help="replay the noise of a counterexample file (its args and neighbour too, unless given) or "
                          "of a JSON object {name: value}")
    run.add_argument("--aligned", action="store_true",
                     help="with a replay: apply the alignment and replay the neighbour's run on φ(H)")
    run.add_argument("--neighbour", action="append", default=[], metavar="NAME=VALUE",
                     help="a private parameter's value on D' (repeatable)")
    run.add_argument("--check-alignment", action="store_true",
                     help="test the alignment on --samples executions against --neighbour")
    run.add_argument("--counterexample-out", metavar="FILE.json",
                     help="with --check-alignment: write the first counterexample found to this file")


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from ..interp.replay import replay
    from ..interp.runner import DEFAULT_CHUNK, Sampling, prepare_arguments

    _check_usage(args)
    source = None
    try:
        source = read(args.file)
        mech = select(resolve_source(source), args.mechanism, args.file)
        if args.check_alignment:
            return _check_alignment(mech, args, renderer)
        if args.noise or args.noise_file:
            raw_args, raw_neighbour, noise = _replay_inputs(mech, args)
            if args.aligned and mech.alignment is None:
                raise SpecError([diag("no-alignment", mech.node.name_span, mechanism=mech.name, what="--aligned")])
            result = replay(mech, args.file, raw_args, noise, raw_neighbour if args.aligned else None)
            renderer.replay(result)
            return result.exit_code
        values = prepare_arguments(mech, _arguments(mech, args))
        sampling = Sampling(mech, values, args.samples, args.seed, args.chunk_size or DEFAULT_CHUNK)
        renderer.samples(SampleRun(args.file, mech, values, args.samples, args.seed, sampling))
        return ExitCode.OK
    except SpecError as error:
        renderer.errors(args.file, source, error.diagnostics)
        return ExitCode.ERROR


def _check_usage(args: Any) -> None:
    """How the options go together (each number's range is its reader's: `options`)."""
    file_name(args.noise_file, "--noise-file")
    file_name(args.counterexample_out, "--counterexample-out")
    replay = bool(args.noise or args.noise_file)
    if args.aligned and not replay:
        raise UsageError("--aligned replays one execution: give its noise with --noise or --noise-file")
    if args.check_alignment and replay:
        raise UsageError("--check-alignment draws its own noise; to replay a counterexample use --noise-file with "
                         "--aligned")
    if args.counterexample_out and not args.check_alignment:
        raise UsageError("--counterexample-out goes with --check-alignment")
    if args.neighbour and not (args.aligned or args.check_alignment):
        raise UsageError("--neighbour is used by --aligned and --check-alignment")


def _arguments(mech: ResolvedMechanism, args: Any) -> dict[str, Any]:
    """The run's arguments: the spec's `example` values, overridden by each `--arg`."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import example_arguments

    return {**example_arguments(mech.node), **read_pairs(args.arg, "--arg")}


def read_pairs(items: list[str], option: str) -> dict[str, Any]:
    """`--arg NAME=VALUE` options as a dict (values read without eval: `interp.values.read_value_text`)."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import read_value_text

    result = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"{option} takes NAME=VALUE, not {item!r}")
        result[name] = read_value_text(name, text.strip())
    return result


# ------------------------------------------------------------------------------------------------ replay


def _replay_inputs(mech: ResolvedMechanism, args: Any) -> tuple[dict, dict, dict]:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..counterexample import Counterexample
    from ..interp.values import example_arguments
    from ..parse import read_json

    raw_args: dict[str, Any] = {}
    raw_neighbour: dict[str, Any] = {}
    noise: dict[str, Any] = {}
    if args.noise_file:
        raw = read_bytes(args.noise_file)  # a regular file of bounded size: never a FIFO or /dev/zero
        try:
            data = read_json(raw.decode("utf-8"))
        except ValueError as error:  # also UnicodeDecodeError, numbers out of range, nesting too deep
            raise SpecError([diag("counterexample-format", None, path=args.noise_file,
                                  reason=f"not JSON ({str(error)[:200]})")]) from None
        if isinstance(data, dict) and "format" in data:
            c = Counterexample.from_json(data, args.noise_file)
            raw_args, raw_neighbour, noise = dict(c.args), dict(c.neighbour), dict(c.noise)
        elif isinstance(data, dict):
            # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
            from ..interp.values import from_json

            try:
                noise = {str(k): from_json(v) for k, v in data.items()}
            except ValueError as error:
                raise SpecError([diag("counterexample-format", None, path=args.noise_file,
                                      reason=str(error))]) from None
        else:
            raise SpecError([diag("counterexample-format", None, path=args.noise_file,
                                  reason="expected a JSON object")])
    raw_args = {**example_arguments(mech.node), **raw_args, **read_pairs(args.arg, "--arg")}
    raw_neighbour.update(read_pairs(args.neighbour, "--neighbour"))
    noise.update(read_pairs(args.noise, "--noise"))
    return raw_args, raw_neighbour, noise


# ------------------------------------------------------------------------------------------- the check


def _check_alignment(mech: ResolvedMechanism, args: Any, renderer: Renderer) -> int:
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from ..counterexample import save
    from ..interp.alignment import check_alignment
    from ..interp.runner import DEFAULT_CHUNK, prepare_arguments, prepare_neighbour

    if mech.alignment is None:
        raise SpecError([diag("no-alignment", mech.node.name_span, mechanism=mech.name, what="--check-alignment")])
    values = prepare_arguments(mech, _arguments(mech, args))
    neighbour = prepare_neighbour(mech, values, read_pairs(args.neighbour, "--neighbour"))
    report = check_alignment(mech, values, neighbour, args.samples, args.seed, args.chunk_size or DEFAULT_CHUNK,
                             spec=args.file)
    write_error: SpecError | None = None
    if args.counterexample_out and report.counterexamples:
        try:
            save(report.counterexamples[0], args.counterexample_out)
        except (OSError, ValueError) as error:  # no such directory, a directory, permission denied, a NUL
            write_error = SpecError([diag("write-error", None, path=args.counterexample_out,
                                          reason=os_reason(error))])
            if renderer.one_document:  # one document on stdout: the error's
                raise write_error from None
    renderer.alignment_check(args.file, mech, report, args.counterexample_out if write_error is None else None)
    if write_error is not None:  # the report is out; the file the user asked for is not: exit 2, not 1
        raise write_error
    return ExitCode.OK if report.ok else ExitCode.REFUTED
