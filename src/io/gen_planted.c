// src/io/gen_planted.c: placeholder, to be written.
