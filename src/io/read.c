// src/io/read.c: placeholder, to be written.
