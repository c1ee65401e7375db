/* grep: for each line of standard input, the first column where the pattern (argv[1])
 * occurs, written as a (row, col) pair of little-endian u32s; lines without a match write
 * nothing. The same output as nearflash's built-in INSIDER grep drive program and as
 * grep.wat (KMP per line). Exit 2 on a bad pattern.
 *
 * Build: clang --target=wasm32-wasi -O2 -Wl,--strip-all -o grep.wasm grep.c
 * (Debian: clang, lld, wasi-libc and libclang-rt-14-dev-wasm32; scripts/setup.sh installs them) */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PATTERN_MAX 64

static void put_u32(unsigned char *p, uint32_t v) {
    p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

int main(int argc, char **argv) {
    size_t plen = argc == 2 ? strlen(argv[1]) : 0;
    if (plen == 0 || plen > PATTERN_MAX || strchr(argv[1], '\n')) {
        fprintf(stderr, "grep: usage: grep PATTERN (1-64 bytes, no newline)\n");
        return 2;
    }
    const unsigned char *pat = (const unsigned char *)argv[1];
    size_t fail[PATTERN_MAX] = {0};
    for (size_t i = 1, k = 0; i < plen; i++) {
        while (k > 0 && pat[i] != pat[k]) k = fail[k - 1];
        if (pat[i] == pat[k]) k++;
        fail[i] = k;
    }
    static unsigned char buf[65536];
    uint32_t row = 0, col = 0;
    size_t m = 0;
    int done = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        for (size_t i = 0; i < n; i++) {
            unsigned char b = buf[i];
            if (b == '\n') { row++; col = 0; m = 0; done = 0; continue; }
            if (done) continue;
            while (m > 0 && pat[m] != b) m = fail[m - 1];
            if (pat[m] == b) m++;
            col++;
            if (m == plen) {
                unsigned char pair[8];
                put_u32(pair, row);
                put_u32(pair + 4, col - (uint32_t)plen);
                fwrite(pair, 1, 8, stdout);
                done = 1;
            }
        }
    }
    return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
