// src/io/gen_er.c: placeholder, to be written.
