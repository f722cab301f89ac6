// src/io/binary.c: placeholder, to be written.
