// src/sparse/check.c: placeholder, to be written.
