// src/io/labels.c: placeholder, to be written.
