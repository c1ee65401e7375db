/* checksum (eBPF): Adler-32 (RFC 1950 §8.2) of range 0. Writes the checksum in decimal and a
 * newline to range 1 and returns its length. */
#include "../cs_helpers.h"

CS_PROGRAM u64 checksum(struct cs_ctx *ctx)
{
    if (ctx->nranges < 2)
        return 0;
    const u8 *in = (const u8 *)ctx->range[0].addr;
    u64 len = ctx->range[0].len;
    u64 a = 1, b = 0;
    u64 i = 0;
    while (i < len) {
        /* 5552 bytes keep b below 2^32 before the reduction (zlib's NMAX); 64-bit sums
         * would allow more, the reduction is kept as zlib does it. */
        u64 end = len - i > 5552 ? i + 5552 : len;
        for (; i < end; i++) {
            a += in[i];
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return cs_put_numbers(1, (b << 16) | a, 0, 0);
}
