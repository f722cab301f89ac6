// src/io/write.c: placeholder, to be written.
