// src/sparse/compare.c: placeholder, to be written.
