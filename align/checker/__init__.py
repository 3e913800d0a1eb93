"""The checker: discharge the obligations of Lemma 1 (Free Gap, Section 4) with z3 and sympy, or refute them.

Modules: `encode` (symbolic execution into z3), `solver` (the one seeded solver factory), `acyclic` (C4b),
`mixture` (the R²DP rule), `verify` (obligations -> verdicts).
"""
