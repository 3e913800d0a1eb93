"""The `align` command line: parse arguments, run one command (`align.commands`), return a documented exit code.

Exit codes (diagnostics.ExitCode): 0 success/proved, 1 refuted, 2 usage/parse/type/internal error,
3 unknown, or (for `verify`) bounded: proved only for lengths <= N, unless `--accept-bounded`. Every command
takes `--output-format` (`align.render.RENDERERS`: text, concise, json); machine output goes to stdout,
diagnostics and progress to stderr. Usage errors are the registered diagnostic `usage`; an unexpected
exception never escapes as a traceback: it becomes an `internal-error` diagnostic and exit 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from . import __version__
from .commands import COMMANDS, UsageError
from .config import NONE as NO_CONFIG
from .config import Config, ConfigError
from .config import load as load_config
from .diagnostics import ExitCode, diag
from .files import project_root
from .render import ALIASES, FORMATS, RENDERERS, Project, Renderer, renderer
from .render.common import Style, diagnostic_line
from .results import FileResult


def _usage(message: str, stderr: TextIO) -> int:
    stderr.write(diagnostic_line(diag("usage", None, message=message), Style.for_stream(stderr)) + "\n")
    return ExitCode.ERROR


class _Parser(argparse.ArgumentParser):
    stream: TextIO = sys.stderr
    """Where usage errors go (the `stderr` given to `main`)."""

    def error(self, message: str) -> None:  # type: ignore[override]  # argparse exits 2 on usage errors; keep that, with our wording
        self.print_usage(self.stream)
        _usage(message, self.stream)
        raise SystemExit(ExitCode.ERROR)


_FORMAT_HELP = "; ".join(f"{name}: {r.description}" for name, r in RENDERERS.items())


def _build_parser(stderr: TextIO) -> tuple[argparse.ArgumentParser, dict[str, Callable]]:
    class Parser(_Parser):
        stream = stderr

    parser = Parser(prog="align", description="Prove differential privacy by randomness alignment.",
                    epilog="Exit codes: 0 success/proved, 1 refuted, 2 error, 3 unknown or only bounded.")
    parser.add_argument("--version", action="version", version=f"align {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    handlers = {}
    for command in COMMANDS:
        description, add_arguments, execute = command.load()
        p = sub.add_parser(command.name, help=command.help, description=description)
        add_arguments(p)
        p.add_argument("--output-format", choices=FORMATS + tuple(ALIASES), default=None, metavar="FORMAT",
                       help=f"{_FORMAT_HELP} (`full` is an older name of `text`); default: `output-format` of "
                            "the project's configuration, else text")
        if command.name in ("run", "test"):  # the option's older name, kept for scripts that use it
            p.add_argument("--format", dest="output_format", choices=("text", "json"), default=argparse.SUPPRESS,
                           help=argparse.SUPPRESS)
        handlers[command.name] = execute
    return parser, handlers


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line; returns the exit code instead of exiting (the console script exits with it)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    output: Renderer | None = None
    try:
        parser, handlers = _build_parser(stderr)
        args = parser.parse_args(argv)
        try:
            config, problem = load_config(), None
        except ConfigError as error:
            config, problem = NO_CONFIG, error
        project = Project(project_root(config.folder), config.docs_url)
        output = renderer(_format(args, config), args.command, stdout, stderr, project)
        if output.commands is not None and args.command not in output.commands:
            raise UsageError(f"--output-format {output.name} is for {' and '.join(sorted(output.commands))} "
                             f"only, not `align {args.command}`")
        if problem is not None:
            return _config_error(problem, args.command, output)
        args.config = config
        try:
            code = handlers[args.command](args, output)
        except ConfigError as error:  # a command that expands the configured `paths` (align verify)
            return _config_error(error, args.command, output)
        output.finish(code)
        return code
    except UsageError as error:
        return _usage(str(error), stderr)
    except SystemExit as exit_:
        return int(exit_.code) if isinstance(exit_.code, int) else ExitCode.ERROR
    except KeyboardInterrupt:
        stderr.write("align: interrupted\n")
        return ExitCode.ERROR
    except Exception as error:  # noqa: BLE001 (the promised last line of defence: no traceback reaches the user)
        d = diag("internal-error", None, error=f"{type(error).__name__}: {error}")
        stderr.write(diagnostic_line(d, Style.for_stream(stderr)) + "\n")
        return ExitCode.ERROR


def _format(args: argparse.Namespace, config: Config) -> str:
    """--output-format, else the configuration's format where it serves the command, else text."""
    if args.output_format is not None:
        return str(args.output_format)
    configured = RENDERERS.get(config.output_format or "")
    if configured is not None and (configured.commands is None or args.command in configured.commands):
        return configured.name
    return "text"


def _config_error(error: ConfigError, command: str, output: Renderer) -> int:
    """A wrong configuration stops every command: its diagnostics, rendered like a file that did not load."""
    if command in ("check", "verify"):
        file = FileResult(error.path, error.source, tuple(error.diagnostics))
        output.checked_file(file) if command == "check" else output.verified_file(file)
        output.finish(ExitCode.ERROR)
    else:
        output.errors(error.path, error.source, error.diagnostics)
    return ExitCode.ERROR


def run() -> None:
    """Console-script entry point."""
    # Die quietly when a reader such as `head` closes stdout early, as other Unix tools do.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
