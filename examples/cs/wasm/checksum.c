/* checksum (WebAssembly): Adler-32 (RFC 1950 §8.2) of the input, printed in decimal. The same
 * algorithm as ../ebpf/checksum.c. */
#include "cs_wasm.h"

static unsigned char buf[65536];

int main(void)
{
    unsigned long long a = 1, b = 0;
    CS_FOR_EACH_BLOCK(buf, n) {
        for (ssize_t i = 0; i < n;) {
            ssize_t end = n - i > 5552 ? i + 5552 : n;
            for (; i < end; i++) {
                a += buf[i];
                b += a;
            }
            a %= 65521;
            b %= 65521;
        }
    }
    printf("%llu\n", (b << 16) | a);
    return 0;
}
