// src/io/abc.c: placeholder, to be written.
