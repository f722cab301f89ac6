// src/cli/cmd_convert.c: placeholder, to be written.
