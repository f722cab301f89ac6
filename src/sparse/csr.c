// src/sparse/csr.c: placeholder, to be written.
