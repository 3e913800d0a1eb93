"""Proof rules: each way `align verify` can prove ε-DP, as one `ProofRule`, chosen once per mechanism.

A rule says which obligations a proof needs (`obligations`), which of them the checker discharges by its
bounded z3 check (and, where the rule allows, the proofs for every length), and which the rule decides
itself (`decided`: the R²DP rule's closed form, by the checker's table `checker.verify.DECIDERS`). A rule is
data: the back ends read it and none of them is imported here. `rule_for` picks the first rule in `RULES` that applies;
every other module asks it (the checker, the reports, `align test`'s choice of input pairs) instead of
testing the mechanism's shape again. Adding a rule (synthesis, couplings) is a subclass here and a place in
`RULES`: mypy refuses a subclass that leaves out a method.

- `Lemma1`: randomness alignment (Free Gap, Lemma 1, Section 4; its implicit C0): the default.
- `ValueMaps`: Lemma 1 where noise with finitely many values (Bernoulli) is aligned by a map of its values, at
  the exact cost of the map (the proof of Lemma 1 with sums in place of integrals); no C3 for the mapped variables.
- `Mixture`: R²DP (seed 002, Theorem 4.1 and Corollary 4.2), for Laplace noise whose scale is drawn from
  other noise and no alignment block: C0 and the mixture rule's MIX.

Both need ADJ first: the neighbouring relation admits two distinct inputs (a proof about D = D' alone is vacuous).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from .obligations import (
    Obligation,
    ObligationId,
    density_obligations,
    lemma1_obligations,
    mixture_obligation,
    neighbours_obligation,
)

if TYPE_CHECKING:
    from .resolve import ResolvedMechanism


class ProofRule(ABC):
    name: str
    """How the reports name it."""
    statement: str
    """What the rule says, as a proof report states it before discharging its obligations."""
    inductive: bool
    """Whether proofs at lengths <= N may be extended to every length by induction over the main loop."""
    bounded: frozenset[ObligationId]
    """The obligations the checker discharges with its z3 check over the input shapes (at each one, or for a
    witness obligation such as ADJ, at one of them)."""
    decided: frozenset[ObligationId]
    """The obligations the rule decides itself, not by the bounded check: the checker decides each with its entry
    in `checker.verify.DECIDERS` (checked complete at import)."""
    counterexample_pairs: bool
    """Whether the checker's refutations are input pairs worth testing for a violation (`align test`)."""
    aligned: bool
    """Whether the proof is by a randomness alignment: the user writes one or align synthesises one
    (checker/synthesis.py), and a mechanism with none is read as shifting no noise."""

    @abstractmethod
    def applies(self, mech: ResolvedMechanism) -> bool:
        """Whether the mechanism has the shape the rule needs."""

    @abstractmethod
    def obligations(self, mech: ResolvedMechanism) -> tuple[Obligation, ...]:
        """What a proof by this rule must establish, in report order."""


_BOUNDED = frozenset({ObligationId.ADJ, ObligationId.C0, ObligationId.C2, ObligationId.C3, ObligationId.C4A,
                      ObligationId.C4B, ObligationId.C4C, ObligationId.C4D})


class Lemma1(ProofRule):
    name = "randomness alignment, Lemma 1 (Free Gap, Section 4)"
    statement = ("Let M use the noise H = (η₁, η₂, ...). M is ε-differentially private if: M terminates with "
                 "probability 1 (C1); the number of noise variables it draws is determined by its output (C2); "
                 "each ηᵢ is drawn from a density fᵢ with ln fᵢ(x)/fᵢ(y) ≤ cᵢ·|x − y| (C3), one fixed density, "
                 "the same in the runs on D and D' (C0, which the lemma leaves implicit); for every D ~ D' and "
                 "output ω there is a local alignment φ (for that D, D' and ω) that maps each H with M(D, H) = ω "
                 "to φ(H) with M(D', φ(H)) = ω (C4a), is acyclic (C4b), costs Σ cᵢ·|ψᵢ| ≤ ε where ψᵢ = φ(H)ᵢ − ηᵢ "
                 "(C4c) and keeps the noise in its support (C4d); and there are countably many local "
                 "alignments (C5). (Free Gap, Section 4, Definition 7 and Lemma 1.)")
    inductive = True
    bounded = _BOUNDED
    decided: frozenset[ObligationId] = frozenset()
    counterexample_pairs = True
    aligned = True

    def applies(self, mech: ResolvedMechanism) -> bool:
        return True

    def obligations(self, mech: ResolvedMechanism) -> tuple[Obligation, ...]:
        return lemma1_obligations(mech)


class ValueMaps(Lemma1):
    """Lemma 1 where some noise has finitely many values and the alignment maps them (`b' = 1 - b`): its proof
    (Free Gap, Section 10) with sums over those values in place of integrals. The obligations are Lemma 1's; C4c
    costs each mapped value exactly (checks.map_cost), C4b lets a map read its own variable, and C4d asks the
    aligned value to have a positive probability. docs/checker.md, "Value maps", has the proof and its
    hypotheses, each with the specs/incorrect/ case that would fool the checker without it."""

    name = "randomness alignment with value maps (Lemma 1 over finitely many values)"
    statement = ("Lemma 1 (Free Gap, Section 4), where a noise variable b with finitely many values v₁, ..., vₙ, "
                 "drawn with probabilities P[vⱼ] fixed in both runs (C0), may be aligned by any map of its "
                 "values, b' = g(b), which reads the data, the parameters and noise earlier in the order but not "
                 "the output (C4b), into values of positive probability (C4d), at the cost ln P[g⁻¹(g(b))] − "
                 "ln P[g(b)] in place of c·|ψ| (C4c), where g⁻¹(g(b)) is every value that g maps where it maps b "
                 "(for a bijection, ln P[b] − ln P[g(b)]). Then P[M(D) = ω] = Σ over H of P[H] ≤ e^ε Σ over φ(H) "
                 "of P[φ(H)] ≤ e^ε P[M(D') = ω]: the proof of Lemma 1 (Section 10) with the sums over each "
                 "preimage of the map in place of the change of variables.")

    def applies(self, mech: ResolvedMechanism) -> bool:
        return bool(mech.mapped_sites)

    def obligations(self, mech: ResolvedMechanism) -> tuple[Obligation, ...]:
        # a mapped variable needs no Lipschitz constant (C3): C4c costs its map exactly
        mapped = {s.name for s in mech.mapped_sites}
        return tuple(o for o in lemma1_obligations(mech) if not (o.id == ObligationId.C3 and o.site in mapped))


class Mixture(ProofRule):
    name = "R²DP scale mixture (seed 002, Theorem 4.1 / Corollary 4.2)"
    statement = ("The Laplace mechanism q(D) + Lap(b) whose scale b = 1/u is itself drawn, independently of the "
                 "data, from a mixing distribution of u, is ε-differentially private with ε = ln(E[u] / "
                 "M'_u(−Δq)), where M_u is the moment generating function of u and Δq the sensitivity (seed 002, "
                 "Theorem 4.1 and Corollary 4.2). The proof needs the mixing noise to have one fixed density in "
                 "both runs (C0) and the claim to be at least the rule's ε (MIX).")
    inductive = False
    bounded = frozenset({ObligationId.ADJ, ObligationId.C0})
    decided = frozenset({ObligationId.MIX})
    counterexample_pairs = False
    aligned = False

    def applies(self, mech: ResolvedMechanism) -> bool:
        # Laplace sites whose scale is drawn from other noise, and no alignment block (with one, the user
        # asks for a Lemma 1 proof): `ResolvedMechanism.mixture_sites`
        return bool(mech.mixture_sites)

    def obligations(self, mech: ResolvedMechanism) -> tuple[Obligation, ...]:
        return (neighbours_obligation(mech), *density_obligations(mech), mixture_obligation(mech))


class PostProcessing:
    """The step from `out` to what a `release` block publishes: not a rule that proves `out` private (a rule above
    does that), but the theorem that carries its proof to the release. Its hypotheses are checked by resolution:
    the block reads `out`, the public parameters and its own variables only (`release-reads-state`,
    `private-in-public`), draws no noise (`release-samples`), and the claim does not read `out`
    (`claim-reads-released`)."""

    name = "post-processing (Dwork & Roth, Proposition 2.1)"
    statement = ("If M is ε-differentially private and f is a function of M's output alone (its other inputs equal "
                 "on D and D'), f ∘ M is ε-differentially private (Dwork & Roth, The Algorithmic Foundations of "
                 "Differential Privacy, Proposition 2.1). The release block is such an f: it reads `out`, the public "
                 "parameters and its own variables only, and draws no noise; so what it publishes is private "
                 "whenever `out` is.")


POST_PROCESSING = PostProcessing()


RULES: tuple[ProofRule, ...] = (Mixture(), ValueMaps(), Lemma1())
"""In the order they are tried: the first that applies is the mechanism's rule."""


def rule_for(mech: ResolvedMechanism) -> ProofRule:
    return next(rule for rule in RULES if rule.applies(mech))


def obligations(mech: ResolvedMechanism) -> tuple[Obligation, ...]:
    """The obligations `align verify` must discharge for this mechanism (its rule's), in report order."""
    return rule_for(mech).obligations(mech)
