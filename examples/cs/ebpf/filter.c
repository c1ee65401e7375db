/* filter (eBPF): counts the lines of range 0 that contain a pattern of 1 to 8 bytes, given
 * as CPARAM1 (the bytes, first byte lowest) and CPARAM2 (its length) — grep -c for a short
 * literal. Writes "COUNT\n" to range 1 and returns its length. */
#include "../cs_helpers.h"

CS_PROGRAM u64 filter(struct cs_ctx *ctx)
{
    if (ctx->nranges < 2 || ctx->param2 < 1 || ctx->param2 > 8)
        return 0;
    const u8 *in = (const u8 *)ctx->range[0].addr;
    u64 len = ctx->range[0].len;
    u64 pat = ctx->param1;
    u64 plen = ctx->param2;
    u64 mask = plen == 8 ? ~0ULL : (1ULL << (8 * plen)) - 1;
    pat &= mask;
    u64 window = 0, seen = 0, lines = 0, hit = 0;
    for (u64 i = 0; i < len; i++) {
        u8 c = in[i];
        if (c == '\n') {
            lines += hit;
            hit = 0;
            seen = 0;
            window = 0;
            continue;
        }
        window = (window >> 8) | ((u64)c << (8 * (plen - 1)));
        seen++;
        if (seen >= plen && (window & mask) == pat)
            hit = 1;
    }
    lines += hit;
    return cs_put_numbers(1, lines, 0, 0);
}
