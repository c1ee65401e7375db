/* filter (WebAssembly): the lines of the input that contain a pattern of 1 to 8 bytes, given
 * as CPARAM1 (the bytes, first byte lowest) and CPARAM2 (its length); prints "COUNT\n". The
 * same algorithm as ../ebpf/filter.c. */
#include "cs_wasm.h"

static unsigned char buf[65536];

int main(int argc, char **argv)
{
    unsigned long long pat = cs_param(argc, argv, 1), plen = cs_param(argc, argv, 2);
    if (plen < 1 || plen > 8)
        return 2;
    unsigned long long mask = plen == 8 ? ~0ULL : (1ULL << (8 * plen)) - 1;
    pat &= mask;
    unsigned long long window = 0, seen = 0, lines = 0, hit = 0;
    CS_FOR_EACH_BLOCK(buf, n) {
        for (ssize_t i = 0; i < n; i++) {
            unsigned char c = buf[i];
            if (c == '\n') {
                lines += hit;
                hit = seen = window = 0;
                continue;
            }
            window = (window >> 8) | ((unsigned long long)c << (8 * (plen - 1)));
            seen++;
            if (seen >= plen && (window & mask) == pat)
                hit = 1;
        }
    }
    lines += hit;
    printf("%llu\n", lines);
    return 0;
}
