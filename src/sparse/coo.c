// src/sparse/coo.c: placeholder, to be written.
