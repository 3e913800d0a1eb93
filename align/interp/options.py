"""Interpreter (command-line options of `align run`): argparse only, so that building the parser stays cheap."""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "Run a mechanism with the reference interpreter. By default: draw --samples executions and summarise the "
    "outputs (frequencies of the discrete outputs, quantiles of the real parts); --format json prints every "
    "sample's output. With --noise/--noise-file: replay one execution and print its trace; add --aligned and "
    "--neighbour to also apply the alignment and replay M(D', φ(H)) next to it. With --check-alignment and "
    "--neighbour: test the alignment on --samples executions and report counterexamples (exit 1 if any).")


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("file", metavar="FILE.dp")
    run.add_argument("--mechanism", metavar="NAME", help="the mechanism to run, when the file defines several")
    run.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                     help="a parameter's value on D: a JSON number, boolean or list, or an exact expression such as "
                          "1/3 (repeatable)")
    run.add_argument("--samples", type=int, default=10000, metavar="N", help="number of executions (default 10000)")
    run.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the run (default 0)")
    run.add_argument("--chunk-size", type=int, default=None, metavar="C",
                     help="executions evaluated together (rounded up to a multiple of 16384; default 131072); "
                          "the results do not depend on it")
    run.add_argument("--format", choices=("text", "json"), default="text",
                     help="text (default): summary or trace; json: raw samples or the trace as one JSON document")
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
