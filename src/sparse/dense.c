// src/sparse/dense.c: placeholder, to be written.
