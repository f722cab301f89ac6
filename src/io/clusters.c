// src/io/clusters.c: placeholder, to be written.
