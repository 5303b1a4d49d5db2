"""Z3 proof obligations for the invariants and their recorded outcomes."""
