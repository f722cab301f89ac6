// src/sparse/sort.c: placeholder, to be written.
