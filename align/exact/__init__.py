"""Event probabilities computed from the program's paths (`align test --exact`): paths.py enumerates the paths
with the noise symbolic, integrate.py brackets their probabilities, search.py finds the strongest event."""
