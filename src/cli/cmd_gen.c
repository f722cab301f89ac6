// src/cli/cmd_gen.c: placeholder, to be written.
