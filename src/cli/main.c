// src/cli/main.c: placeholder, to be written.
int main(void) { return 1; }
