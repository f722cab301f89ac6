// src/sparse/transpose.c: placeholder, to be written.
