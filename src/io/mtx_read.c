// src/io/mtx_read.c: placeholder, to be written.
