"""`python -m align` runs the command line."""

from .cli import run

run()
