"""Numba kernels of Dystopian Wars, one module per mechanic (attack resolution, fire
allocation, ram/collision, boarding, rout test, the squadron duel)."""
