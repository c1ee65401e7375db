/* aggregate (eBPF): the count and sum of one column of comma-separated unsigned integers in
 * range 0, one row per line; CPARAM1 is the column (0 is the first). A row without that
 * column counts nothing. Writes "COUNT SUM\n" to range 1 and returns its length. */
#include "../cs_helpers.h"

CS_PROGRAM u64 aggregate(struct cs_ctx *ctx)
{
    if (ctx->nranges < 2)
        return 0;
    const u8 *in = (const u8 *)ctx->range[0].addr;
    u64 len = ctx->range[0].len;
    u64 column = ctx->param1;
    u64 col = 0, value = 0, in_col = 0, count = 0, sum = 0;
    for (u64 i = 0; i < len; i++) {
        u8 c = in[i];
        if (c == '\n' || c == ',') {
            if (col == column && in_col) {
                count++;
                sum += value;
            }
            value = 0;
            in_col = 0;
            col = c == '\n' ? 0 : col + 1;
            continue;
        }
        if (col == column && c >= '0' && c <= '9') {
            value = value * 10 + (c - '0');
            in_col = 1;
        }
    }
    if (col == column && in_col) {
        count++;
        sum += value;
    }
    return cs_put_numbers(1, count, sum, 1);
}
