/* Two loops for benchmarks/machine_contention.py, each about a second on one core.
 *
 *   loops latency     one chain of multiply-adds: bound by the multiplier's latency,
 *                     it leaves most of a core's execution units to a sibling thread;
 *   loops throughput  eight independent chains: bound by the multiplier's throughput,
 *                     which two hardware threads of one core share.
 *
 * Prints the seconds the loop took (and a bit of the result, so that it is computed). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define A 6364136223846793005ULL /* Knuth's MMIX LCG */
#define C 1442695040888963407ULL

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "latency") && strcmp(argv[1], "throughput"))) {
        fprintf(stderr, "usage: loops latency|throughput\n");
        return 2;
    }
    double t0 = now();
    uint64_t s = 0;
    if (!strcmp(argv[1], "latency")) {
        uint64_t x = 1;
        for (uint64_t i = 0; i < 600000000ULL; i++) x = x * A + C;
        s = x;
    } else {
        uint64_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        for (uint64_t i = 0; i < 130000000ULL; i++)
            for (int j = 0; j < 8; j++) x[j] = x[j] * A + C;
        for (int j = 0; j < 8; j++) s ^= x[j];
    }
    printf("%.3f %llu\n", now() - t0, (unsigned long long)(s & 1));
    return 0;
}
