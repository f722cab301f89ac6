// src/sparse/tiles.c: placeholder, to be written.
