// src/io/mtx_write.c: placeholder, to be written.
