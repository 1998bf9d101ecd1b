"""Numba kernels of the B-17 defence game (spec: docs/models/b17.md).

``shot``: one gun's 3d10 roll-under shot and its damage from the quality dice of the same
roll; ``gun_shot`` and ``gun_matrix``: chunked kernels of the single-shot questions;
``attack``: one German attack (target choice, simultaneous fire, delayed ``**`` shots,
fighter states, kill credit) shared by ``attack_wave`` and ``mission``.
"""
