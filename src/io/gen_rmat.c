// src/io/gen_rmat.c: placeholder, to be written.
