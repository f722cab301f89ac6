// src/sparse/permute.c: placeholder, to be written.
