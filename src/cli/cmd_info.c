// src/cli/cmd_info.c: placeholder, to be written.
