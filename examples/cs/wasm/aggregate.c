/* aggregate (WebAssembly): the count and sum of column CPARAM1 (0 is the first) of
 * comma-separated unsigned integers, one row per line; prints "COUNT SUM\n". The same
 * algorithm as ../ebpf/aggregate.c. */
#include "cs_wasm.h"

static unsigned char buf[65536];

int main(int argc, char **argv)
{
    unsigned long long column = cs_param(argc, argv, 1);
    unsigned long long col = 0, value = 0, in_col = 0, count = 0, sum = 0;
    CS_FOR_EACH_BLOCK(buf, n) {
        for (ssize_t i = 0; i < n; i++) {
            unsigned char c = buf[i];
            if (c == '\n' || c == ',') {
                if (col == column && in_col) {
                    count++;
                    sum += value;
                }
                value = in_col = 0;
                col = c == '\n' ? 0 : col + 1;
                continue;
            }
            if (col == column && c >= '0' && c <= '9') {
                value = value * 10 + (c - '0');
                in_col = 1;
            }
        }
    }
    if (col == column && in_col) {
        count++;
        sum += value;
    }
    printf("%llu %llu\n", count, sum);
    return 0;
}
