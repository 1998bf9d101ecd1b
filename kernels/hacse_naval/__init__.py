"""HACSE naval kernels (numba): damage sheets, depth charges, torpedoes, mines, fire, sighting."""
