/* statistics: standard input is rows of little-endian u32 values, argv[1] the row size in
 * bytes (a positive multiple of 4); for each row, writes (max, min, sum low 32 bits, sum high
 * 32 bits) as little-endian u32s. The same output as nearflash's built-in INSIDER statistics
 * drive program and as statistics.wat. Exit 2 on a bad row size, 1 when the input ends
 * inside a row.
 *
 * Build: clang --target=wasm32-wasi -O2 -Wl,--strip-all -o statistics.wasm statistics.c
 * (Debian: clang, lld, wasi-libc and libclang-rt-14-dev-wasm32; scripts/setup.sh installs them) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void put_u32(unsigned char *p, uint32_t v) {
    p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

int main(int argc, char **argv) {
    char *end = NULL;
    unsigned long row_bytes = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
    if (argc != 2 || *argv[1] == '\0' || *end != '\0' || row_bytes == 0 || row_bytes % 4 != 0 ||
        row_bytes > 0xffffffffUL) {
        fprintf(stderr, "statistics: usage: statistics ROW_BYTES (a positive multiple of 4)\n");
        return 2;
    }
    const uint64_t row_values = row_bytes / 4;
    static unsigned char buf[65536];
    uint64_t in_row = 0, sum = 0;
    uint32_t min = UINT32_MAX, max = 0;
    size_t have = 0, n;
    while ((n = fread(buf + have, 1, sizeof buf - have, stdin)) > 0) {
        have += n;
        size_t whole = have / 4 * 4;
        for (size_t i = 0; i < whole; i += 4) {
            uint32_t v = buf[i] | buf[i + 1] << 8 | buf[i + 2] << 16 | (uint32_t)buf[i + 3] << 24;
            min = v < min ? v : min;
            max = v > max ? v : max;
            sum += v;
            if (++in_row == row_values) {
                unsigned char t[16];
                put_u32(t, max);
                put_u32(t + 4, min);
                put_u32(t + 8, (uint32_t)sum);
                put_u32(t + 12, (uint32_t)(sum >> 32));
                fwrite(t, 1, 16, stdout);
                in_row = 0; sum = 0; min = UINT32_MAX; max = 0;
            }
        }
        for (size_t i = whole; i < have; i++) buf[i - whole] = buf[i];
        have -= whole;
    }
    if (have != 0 || in_row != 0) {
        fprintf(stderr, "statistics: input ends inside a row\n");
        return 1;
    }
    return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
