"""Interpreter (the `align run` command): sample a mechanism, replay one execution, or test its alignment.

Exit codes: 0 success; 1 the alignment fails (a failing sample of --check-alignment, or a replay with --aligned
that breaks an obligation); 2 usage, input, parse, type or runtime error.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from ..counterexample import Counterexample, save
from ..diagnostics import ExitCode, SpecError, diag
from ..limits import MAX_CHUNK_SIZE, MAX_SAMPLES, MAX_SEED
from ..parse import parse_source, read_bytes, read_json, read_source
from ..report import diagnostic_json, report_errors
from ..resolve import ResolvedMechanism, resolve
from ..span import Source
from ..unparse import unparse
from .errors import RunError
from .runner import DEFAULT_CHUNK, Summary, chunks, prepare_arguments, prepare_neighbour
from .values import format_value, read_value_text, to_json


class UsageError(Exception):
    pass


def run_command(args: Any, stdout: TextIO, stderr: TextIO) -> int:
    source: Source | None = None
    try:
        _check_usage(args)
        source = read_source(args.file)
        mech = _select(resolve(parse_source(source)), args.mechanism, args.file)
        if args.check_alignment:
            return _check_alignment(mech, args, stdout)
        if args.noise or args.noise_file:
            return _replay(mech, args, stdout)
        return _sample(mech, args, stdout)
    except UsageError as error:
        stderr.write(f"align: error[usage]: {error}\n")
        return ExitCode.ERROR
    except SpecError as error:
        report_errors(error, source, "run", args.file, args.format == "json", stdout, stderr)
        return ExitCode.ERROR


def _check_usage(args: Any) -> None:
    # Bounds from align/limits.py: a negative seed or a count past 2^63 would otherwise reach numpy as a
    # ValueError or OverflowError (a traceback), and a huge chunk would allocate arrays of that many lanes.
    if not 0 <= args.samples <= MAX_SAMPLES:
        raise UsageError(f"--samples must be between 0 and {MAX_SAMPLES}")
    if not 0 <= args.seed <= MAX_SEED:
        raise UsageError("--seed must be an integer between 0 and 2^128 - 1")
    if args.chunk_size is not None and not 1 <= args.chunk_size <= MAX_CHUNK_SIZE:
        raise UsageError(f"--chunk-size must be between 1 and {MAX_CHUNK_SIZE}")
    replay = bool(args.noise or args.noise_file)
    if args.aligned and not replay:
        raise UsageError("--aligned replays one execution: give its noise with --noise or --noise-file")
    if args.check_alignment and replay:
        raise UsageError("--check-alignment draws its own noise; to replay a counterexample use --noise-file with --aligned")
    if args.counterexample_out and not args.check_alignment:
        raise UsageError("--counterexample-out goes with --check-alignment")
    if args.neighbour and not (args.aligned or args.check_alignment):
        raise UsageError("--neighbour is used by --aligned and --check-alignment")


def _select(spec, name: str | None, path: str) -> ResolvedMechanism:
    names = [m.name for m in spec.mechanisms]
    if name is not None:
        for m in spec.mechanisms:
            if m.name == name:
                return m
        from ..diagnostics import did_you_mean

        raise SpecError([diag("unknown-mechanism", None, name=name, hint=did_you_mean(name, names))])
    if len(spec.mechanisms) > 1:
        raise SpecError([diag("which-mechanism", None, path=path, names=", ".join(f"`{n}`" for n in names))])
    return spec.mechanisms[0]


def _pairs(items: list[str], option: str) -> dict[str, Any]:
    result = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"{option} takes NAME=VALUE, not {item!r}")
        result[name] = read_value_text(name, text.strip())
    return result


# ---------------------------------------------------------------------------------------------- sampling


def _sample(mech: ResolvedMechanism, args: Any, stdout: TextIO) -> int:
    values = prepare_arguments(mech, _pairs(args.arg, "--arg"))
    chunk_size = args.chunk_size or DEFAULT_CHUNK
    if args.format == "json":
        head = {"command": "run", "path": args.file, "mechanism": mech.name, "samples": args.samples,
                "seed": args.seed, "args": to_json(values)}
        text = json.dumps(head)
        stdout.write(text[:-1] + ', "outputs": [')
        first = True
        for chunk in chunks(mech, values, args.samples, args.seed, chunk_size):
            for i in range(chunk.outputs.n):
                stdout.write(("" if first else ",\n  ") + json.dumps(to_json(chunk.outputs.value(i))))
                first = False
        stdout.write("]}\n")
        return ExitCode.OK
    summary = Summary.of(mech)
    for chunk in chunks(mech, values, args.samples, args.seed, chunk_size):
        summary.add(chunk.outputs)
    stdout.write(f"mechanism {mech.name}  ({args.file})\n")
    stdout.write("arguments: " + ", ".join(f"{k} = {format_value(v)}" for k, v in values.items()) + "\n")
    stdout.write(f"seed {args.seed}\n")
    stdout.write(summary.text() + "\n")
    return ExitCode.OK


# ------------------------------------------------------------------------------------------------ replay


def _replay_inputs(mech: ResolvedMechanism, args: Any) -> tuple[dict, dict, dict]:
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
            from .values import from_json

            try:
                noise = {str(k): from_json(v) for k, v in data.items()}
            except ValueError as error:
                raise SpecError([diag("counterexample-format", None, path=args.noise_file, reason=str(error))]) from None
        else:
            raise SpecError([diag("counterexample-format", None, path=args.noise_file,
                                  reason="expected a JSON object")])
    raw_args.update(_pairs(args.arg, "--arg"))
    raw_neighbour.update(_pairs(args.neighbour, "--neighbour"))
    noise.update(_pairs(args.noise, "--noise"))
    return raw_args, raw_neighbour, noise


def _replay(mech: ResolvedMechanism, args: Any, stdout: TextIO) -> int:
    from .scalar import Interpreter, NoiseValues, align

    raw_args, raw_neighbour, noise = _replay_inputs(mech, args)
    values = prepare_arguments(mech, raw_args)
    neighbour = None
    if args.aligned:
        if mech.alignment is None:
            raise SpecError([diag("no-alignment", mech.node.name_span, mechanism=mech.name, what="--aligned")])
        neighbour = prepare_neighbour(mech, values, raw_neighbour)
    run = Interpreter(mech, NoiseValues(mech, noise)).run(values)
    doc: dict[str, Any] = {"command": "run", "mode": "replay", "path": args.file, "mechanism": mech.name,
                           "args": to_json(values), "noise": to_json(noise), "out": to_json(run.out),
                           "trace": [_event_json(e) for e in run.trace], "unused_noise": run.unused}
    lines = ["run on D: " + _arguments_text(values)]
    lines += _trace_lines(run.trace)
    lines.append(f"out = {format_value(run.out)}")
    if run.unused:
        lines.append("unused noise values: " + ", ".join(run.unused))
    status = ExitCode.OK
    if neighbour is not None:
        alignment = align(mech, values, neighbour, run)
        aligned_args = {**values, **neighbour}
        failures = []
        lines.append("")
        lines.append("alignment φ(H), neighbour " + ", ".join(f"{k}' = {format_value(v)}" for k, v in neighbour.items()))
        if alignment.lets:
            for name, value in alignment.lets.items():
                lines.append(f"  let {name} = {format_value(value)}")
        rows = [("noise", "value", "shift ψ", "aligned", "c", "c·|ψ|")]
        for d in alignment.draws:
            coefficient = "-" if d.coefficient is None else format_value(d.coefficient)
            cost = format_value(d.cost) if d.coefficient is not None or d.shift == 0 else "not Lipschitz"
            rows.append((d.draw.display, format_value(d.draw.value), format_value(d.shift), format_value(d.aligned),
                         coefficient, cost))
        widths = [max(len(r[k]) for r in rows) for k in range(6)]
        for r in rows:
            lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        cost = alignment.cost
        cost_ok = cost <= alignment.claim + 1e-9 * (1 + abs(alignment.claim))
        lines.append(f"  cost {format_value(cost)} {'<=' if cost_ok else '>'} claim {unparse(mech.claim)} = "
                     f"{format_value(alignment.claim)}: {'ok' if cost_ok else 'C4c fails'}")
        if not cost_ok:
            failures.append("C4c")
        for d in alignment.draws:
            if d.coefficient is None and d.shift != 0:
                lines.append(f"  {d.draw.display} ~ {d.draw.site.distribution.name} is not Lipschitz but is shifted: "
                             "C3 fails")
                failures.append("C3")
        bad = [d for d in alignment.draws if not (d.in_support and d.whole)]
        for d in bad:
            dist = d.draw.site.distribution
            why = f"outside the support {dist.support} of {dist.name}" if not d.in_support else "not a whole shift"
            lines.append(f"  {d.draw.display}' = {format_value(d.aligned)}: {why}: C4d fails")
        if bad:
            failures.append("C4d")
        else:
            lines.append("  support: every aligned value is valid noise")
        lines.append("")
        lines.append("run on D' with φ(H): " + _arguments_text(aligned_args))
        aligned_doc: dict[str, Any] = {}
        try:
            aligned_run = Interpreter(mech, NoiseValues(mech, alignment.noise(), aligned=True)).run(aligned_args)
            lines += _trace_lines(aligned_run.trace)
            lines.append(f"out' = {format_value(aligned_run.out)}")
            match, same_draws = _same_output(run.out, aligned_run.out, values, neighbour), not aligned_run.unused
            aligned_doc = {"out": to_json(aligned_run.out), "trace": [_event_json(e) for e in aligned_run.trace]}
            if match and not same_draws:
                lines.append("outputs match, but the run on D' leaves noise unused: " + ", ".join(aligned_run.unused)
                             + ": C2 fails")
                failures.append("C2")
            lines.append(f"outputs match: {'yes' if match else 'no: C4a fails'}")
            if not match:
                failures.append("C4a")
        except RunError as error:
            lines.append(f"  stops: error[{error.diagnostic.code}]: {error.diagnostic.message}")
            lines.append("outputs match: no: C4a fails")
            aligned_doc = {"error": diagnostic_json(error.diagnostic)}
            failures.append("C4a")
        lines.append("the alignment holds for this H" if not failures else
                     "the alignment fails for this H: " + ", ".join(dict.fromkeys(failures)))
        status = ExitCode.REFUTED if failures else ExitCode.OK
        doc["alignment"] = {
            "neighbour": to_json(neighbour), "lets": {k: to_json(v) for k, v in alignment.lets.items()},
            "noise": [{"name": d.draw.display, "value": to_json(d.draw.value), "shift": to_json(d.shift),
                       "aligned": to_json(d.aligned), "c": d.coefficient, "cost": d.cost, "in_support": d.in_support,
                       "whole_shift": d.whole} for d in alignment.draws],
            "cost": cost, "claim": alignment.claim, "aligned_run": aligned_doc,
            "failures": list(dict.fromkeys(failures))}
    if args.format == "json":
        doc["exit_code"] = int(status)
        json.dump(doc, stdout, indent=2)
        stdout.write("\n")
    else:
        stdout.write("\n".join(lines) + "\n")
    return status


def _same_output(a: list, b: list, values: dict, neighbour: dict) -> bool:
    from .alignment import magnitude

    scale = magnitude(values, neighbour)

    def same(x: Any, y: Any) -> bool:
        if isinstance(x, float) or isinstance(y, float):
            if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, (int, float)) or \
                    not isinstance(y, (int, float)):
                return False
            return x == y or abs(x - y) <= 1e-9 * (1 + abs(x) + abs(y) + scale)
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            return type(x) is type(y) and len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
        if hasattr(x, "payload") and hasattr(y, "payload"):
            return x.name == y.name and same(list(x.payload), list(y.payload))
        return x == y

    return same(a, b)


def _arguments_text(values: dict) -> str:
    return ", ".join(f"{k} = {format_value(v)}" for k, v in values.items())


def _trace_lines(trace) -> list[str]:
    return [f"  line {e.line:<4} {'  ' * e.depth}{e.text}" for e in trace]


def _event_json(e) -> dict[str, Any]:
    return {"kind": e.kind, "line": e.line, "text": e.text, "depth": e.depth}


# ------------------------------------------------------------------------------------------- the check


def _check_alignment(mech: ResolvedMechanism, args: Any, stdout: TextIO) -> int:
    from .alignment import check_alignment

    if mech.alignment is None:
        raise SpecError([diag("no-alignment", mech.node.name_span, mechanism=mech.name, what="--check-alignment")])
    values = prepare_arguments(mech, _pairs(args.arg, "--arg"))
    neighbour = prepare_neighbour(mech, values, _pairs(args.neighbour, "--neighbour"))
    report = check_alignment(mech, values, neighbour, args.samples, args.seed, args.chunk_size or DEFAULT_CHUNK,
                             spec=args.file)
    write_error: SpecError | None = None
    if args.counterexample_out and report.counterexamples:
        try:
            save(report.counterexamples[0], args.counterexample_out)
        except (OSError, ValueError) as error:  # no such directory, a directory, permission denied, a NUL
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            write_error = SpecError([diag("write-error", None, path=args.counterexample_out, reason=reason)])
            if args.format == "json":  # one JSON document on stdout: the error's
                raise write_error from None
    if args.format == "json":
        doc = {"command": "run", "mode": "check-alignment", **report.to_json(),
               "exit_code": int(ExitCode.OK if report.ok else ExitCode.REFUTED)}
        json.dump(doc, stdout, indent=2)
        stdout.write("\n")
    else:
        stdout.write(report.text() + "\n")
        if args.counterexample_out and write_error is None:
            stdout.write(f"first counterexample written to {args.counterexample_out}\n" if report.counterexamples
                         else "no counterexample to write\n")
    if write_error is not None:  # the report is out; the file the user asked for is not: exit 2, not 1
        raise write_error
    return ExitCode.OK if report.ok else ExitCode.REFUTED
