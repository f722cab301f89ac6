// src/cli/opts.c: placeholder, to be written.
