"""The SMT layer: z3 terms with align's limits (terms.py), the solver with deterministic resource limits
(solver.py), the language encoded as z3 terms for given input lengths (encode.py), noise densities and supports
as terms (densities.py, supports.py), and sympy formulas as terms (formulas.py).

The back ends (checker/, stats/, exact/) import it; it imports nothing of theirs. Importing it loads z3: the
commands that need no solver (`align check`, `align explain`) never do.
"""
