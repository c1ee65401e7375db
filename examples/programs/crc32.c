/* crc32: the CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32() and Rust's
 * crc32fast) of standard input, as 8 lowercase hex digits and a newline. No paper's device
 * program computes it; the same output as crc32.wat.
 *
 * Build: clang --target=wasm32-wasi -O2 -Wl,--strip-all -o crc32.wasm crc32.c
 * (Debian: clang, lld, wasi-libc and libclang-rt-14-dev-wasm32; scripts/setup.sh installs them) */
#include <stdint.h>
#include <stdio.h>

int main(void) {
    uint32_t table[256];
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & -(c & 1));
        table[n] = c;
    }
    static unsigned char buf[65536];
    uint32_t crc = 0xffffffffu;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        for (size_t i = 0; i < n; i++) crc = (crc >> 8) ^ table[(crc ^ buf[i]) & 0xff];
    printf("%08x\n", crc ^ 0xffffffffu);
    return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
