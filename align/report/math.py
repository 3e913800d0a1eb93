"""Report (math): sympy formulas as LaTeX (Markdown, TeX) and presentation MathML (HTML), with the spec's
names shown as a course writes them (`eps` as ε, `eps0` as ε₀, `theta` as θ, `q'[i]` as is)."""

from __future__ import annotations

import re
from functools import cache

import sympy
from sympy.printing.mathml import mathml as to_mathml

_GREEK = {"eps": "epsilon", "epsilon": "epsilon", "delta": "delta", "theta": "theta", "alpha": "alpha",
          "beta": "beta", "gamma": "gamma", "lambda": "lambda", "mu": "mu", "sigma": "sigma", "rho": "rho",
          "tau": "tau", "eta": "eta", "xi": "xi", "nu": "nu", "zeta": "zeta", "phi": "phi", "psi": "psi",
          "omega": "omega", "kappa": "kappa"}

_RELATIONS = {"=": ("=", "="), "<=": (r"\le", "&#x2264;"), ">=": (r"\ge", "&#x2265;"), "<": ("<", "&lt;"),
              "~": (r"\approx", "&#x2248;")}
"""A relation of a display chain: its LaTeX and its MathML operator."""


@cache
def display_name(name: str) -> str:
    """`eps0` -> `epsilon_0`, `eps` -> `epsilon`, `N_TOP` as is: sympy's printers then typeset Greek names and
    subscripts."""
    m = re.fullmatch(r"([A-Za-z]+?)_?(\d+)", name)
    if m and m.group(1) in _GREEK:
        return f"{_GREEK[m.group(1)]}_{m.group(2)}"
    return _GREEK.get(name, name)


def pretty(expr: sympy.Basic) -> sympy.Basic:
    """The expression with each symbol renamed for display (assumptions kept)."""
    renames = {s: sympy.Symbol(display_name(s.name), **s.assumptions0)
               for s in expr.free_symbols if isinstance(s, sympy.Symbol) and display_name(s.name) != s.name}
    return expr.xreplace(renames) if renames else expr


def latex(expr: sympy.Basic) -> str:
    return sympy.latex(pretty(expr))


def mathml(expr: sympy.Basic) -> str:
    """Presentation MathML content (without the <math> element)."""
    return to_mathml(pretty(expr), printer="presentation")


def relation_latex(rel: str) -> str:
    return _RELATIONS[rel][0]


def relation_mathml(rel: str) -> str:
    return f"<mo>{_RELATIONS[rel][1]}</mo>"
