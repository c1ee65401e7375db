/* cs_helpers.h — what an eBPF program sees inside a nearflash compute namespace
 * (crates/cs, docs/cs.md). Build a program with
 *
 *     clang -target bpf -O2 -c prog.c -o prog.o
 *
 * The object's one code section holds the program; its first instruction is the entry. The
 * program is handed a pointer to the context (r1) and returns a 64-bit value (r0), which
 * Execute Program completes with.
 *
 * Memory: the stack (512 bytes), the context (read only) and the ranges of the memory range
 * set named by Execute Program, each at ctx->range[i].addr for ctx->range[i].len bytes. Any
 * access outside them stops the program (status Program Memory Access Violation). Global
 * data, maps and calls to anything but the helpers below are refused when the program is
 * activated (no relocation is resolved).
 *
 * Budget: every instruction counts; a helper counts as 100 instructions plus one per 8 bytes
 * it moves (the WebAssembly runtime's host-call cost, crates/wasm/src/cost.rs). A program over
 * its budget stops (status Program Execution Time Exceeded).
 *
 * Convention of the examples: range 0 is the input, range 1 the output; the program writes
 * its answer as text at the start of range 1 and returns its length in bytes.
 */
#ifndef CS_HELPERS_H
#define CS_HELPERS_H

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define CS_RANGES_MAX 32

struct cs_range {
    u64 addr; /* where the program sees the range */
    u64 len;  /* its length in bytes */
};

struct cs_ctx {
    u64 param1; /* Execute Program's CPARAM1 */
    u64 param2; /* and CPARAM2 */
    u32 nranges;
    u32 reserved;
    struct cs_range range[CS_RANGES_MAX];
};

/* 1: copy len bytes from range `range` at `offset` to dst (the stack or a range). */
static long (*slm_read)(u32 range, u64 offset, void *dst, u64 len) = (void *)1;
/* 2: copy len bytes from src to range `range` at `offset`. */
static long (*slm_write)(u32 range, u64 offset, const void *src, u64 len) = (void *)2;
/* 3: parameter n (1 is CPARAM1, 2 is CPARAM2). */
static u64 (*get_param)(u32 n) = (void *)3;
/* 4: append len bytes of text to the run's log (4 KiB kept). */
static long (*cs_log)(const char *msg, u64 len) = (void *)4;

#define CS_PROGRAM __attribute__((section("cs"), used))

/* Writes `count` and, when `two`, a space and `value`, then a newline, at the start of range
 * `out`; returns the bytes written (0 when the range is too small). Digits go onto the stack
 * back to front, then one slm_write moves them. */
static __attribute__((always_inline)) u64 cs_put_numbers(u32 out, u64 count, u64 value, int two)
{
    char buf[48];
    int at = 47;
    buf[at] = '\n';
    if (two) {
        do {
            buf[--at] = '0' + value % 10;
            value /= 10;
        } while (value && at > 25);
        buf[--at] = ' ';
    }
    do {
        buf[--at] = '0' + count % 10;
        count /= 10;
    } while (count && at > 1);
    u64 n = 48 - at;
    if (slm_write(out, 0, &buf[at], n) != 0)
        return 0;
    return n;
}

#endif
