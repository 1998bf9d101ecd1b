"""numba kernels of U-Boat Leader (one module per mechanic; layouts in ``state``)."""
