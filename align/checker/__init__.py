"""The checker (`align verify`): discharge the obligations of a mechanism's proof rule with z3 and sympy, or refute
them, on the SMT layer (align/smt/).

Modules by job: `verify` (orchestration: obligations -> verdicts), `options` (options and the input shapes a
bounded check covers), `checks` (the z3 check of each obligation at one input shape), `models` (a model as a
counterexample), `verdicts` (a verdict being built), `acyclic` (C4b), `replay` (confirmation by the interpreter),
`mixture` (the R²DP rule), `synthesis` and `learner` (alignment synthesis). The proofs for every length:
`every_length` (the Strategy protocol), `strategies` (the strategies and rewrites, in order), one module per
strategy or rewrite (docs/architecture.md).
"""
