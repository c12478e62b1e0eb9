/*
 * What a cold read costs on this machine: the latency of one dependent random
 * read (a pointer chase, one read per 64-byte line) over working sets from
 * 16 KiB to 256 MiB, with 4 KiB pages and with transparent huge pages asked for
 * (madvise(MADV_HUGEPAGE)). A delivered packet in ecnsim reads a chain of
 * dependent cold lines (docs/performance.md, "Hiding the misses"); this gives
 * each level's price, so a per-hop cost can be split into what the caches and
 * the page tables charge (docs/performance.md, "What a cold read costs here").
 *
 *   cc -O2 -o /tmp/memory_latency bench/memory_latency.c && /tmp/memory_latency
 *
 * Plain C, no dependencies; not part of the build or the tests.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* xorshift64: a fixed permutation per size, the same on every run. */
static uint64_t next(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static double chase(size_t bytes, int huge) {
    const size_t align = 2u << 20, lines = bytes / 64;
    uint8_t *raw = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return -1.0;
    uint64_t *a = (uint64_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (huge) madvise(a, bytes, MADV_HUGEPAGE);
    memset(a, 0, bytes);
    size_t *order = malloc(lines * sizeof *order);
    for (size_t i = 0; i < lines; i++) order[i] = i;
    uint64_t x = 88172645463325252ull;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = next(&x) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    /* One cycle through every line, in random order: each read's address is the last read's value. */
    for (size_t i = 0; i < lines; i++) a[order[i] * 8] = order[(i + 1) % lines] * 8;
    free(order);
    size_t p = 0;
    for (size_t i = 0; i < lines; i++) p = a[p]; /* warm: every line once */
    const long reads = 10000000;
    double t0 = seconds();
    for (long i = 0; i < reads; i++) p = a[p];
    double ns = (seconds() - t0) / (double)reads * 1e9;
    if (p == SIZE_MAX) puts(""); /* keeps the chase */
    munmap(raw, bytes + align);
    return ns;
}

int main(void) {
    const size_t kib[] = {16, 256, 768, 2048, 4096, 6144, 8192, 12288, 16384, 32768, 65536, 262144};
    printf("working set   4 KiB pages   huge pages   (ns per dependent read)\n");
    for (size_t i = 0; i < sizeof kib / sizeof kib[0]; i++) {
        double small = chase(kib[i] << 10, 0), huge = chase(kib[i] << 10, 1);
        printf("%8zu KiB   %9.1f   %10.1f\n", kib[i], small, huge);
    }
    return 0;
}
