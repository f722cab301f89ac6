// src/io/source.c: placeholder, to be written.
