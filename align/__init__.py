"""align: prove differential privacy by randomness alignment (Lemma 1 of the Free Gap paper).

Stages (each a module named after it): parse -> resolve -> obligations -> report; `cli` drives them.
"""

__version__ = "0.1.0"
