/* cs_wasm.h — what a WebAssembly program sees inside a nearflash compute namespace
 * (crates/cs, docs/cs.md). A program is a WASI command (clang --target=wasm32-wasi):
 *   - standard input is range 0 of the memory range set Execute Program names;
 *   - argv[1] and argv[2] are CPARAM1 and CPARAM2 in decimal;
 *   - standard output goes to the start of range 1 (writing past its end stops the program);
 *   - Execute Program completes with the number of bytes written to standard output.
 * Fuel, memory and output are bounded as for `nearflash program run` (docs/programs.md). */
#ifndef CS_WASM_H
#define CS_WASM_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline unsigned long long cs_param(int argc, char **argv, int n)
{
    return argc > n ? strtoull(argv[n], 0, 10) : 0;
}

/* Reads standard input block by block into buf, n bytes at a time. */
#define CS_FOR_EACH_BLOCK(buf, n)                                                          \
    for (ssize_t n; (n = read(0, buf, sizeof buf)) > 0;)

#endif
