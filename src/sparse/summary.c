// src/sparse/summary.c: placeholder, to be written.
