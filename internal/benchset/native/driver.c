//go:build ignore

/*
 * driver.c times one benchmark program of ../c compiled as native code by
 * clang (cmd/benchtable builds it with the program's source):
 *
 *   clang-19 -O2 -DBENCH_FN=prime -DBENCH_RET=__u64 -I../../../examples/include \
 *            driver.c ../c/prime.bpf.c -o prime
 *   ./prime INPUT_FILE ROUNDS
 *
 * The program gets a pointer to the input's bytes, as uebpf gives it its
 * context; the call goes to another translation unit, so each one runs.
 * It prints the result and, for each round, the thread's CPU time per
 * call in ns, a round being as many calls as take about 100 ms.
 */
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern BENCH_RET BENCH_FN(void *ctx);

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s INPUT_FILE ROUNDS\n", argv[0]);
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	/* 64-byte aligned and never empty, as uebpf's contexts are 8-aligned. */
	void *ctx = aligned_alloc(64, (size + 64) / 64 * 64);
	if (!ctx || fread(ctx, 1, size, f) != (size_t)size) {
		fprintf(stderr, "%s: cannot read\n", argv[1]);
		return 1;
	}
	fclose(f);
	int rounds = atoi(argv[2]);

	unsigned long long result = (unsigned long long)BENCH_FN(ctx);
	long n = 1;
	for (;;) { /* calls per round: about 100 ms */
		double t0 = cpu_ns();
		for (long i = 0; i < n; i++)
			BENCH_FN(ctx);
		double t = cpu_ns() - t0;
		if (t > 1e8 || n > (1L << 40))
			break;
		n = t < 1e6 ? n * 100 : (long)(n * 1.2e8 / t);
	}
	printf("result %llu\n", result);
	for (int r = 0; r < rounds; r++) {
		double t0 = cpu_ns();
		for (long i = 0; i < n; i++)
			BENCH_FN(ctx);
		printf("ns %.3f\n", (cpu_ns() - t0) / n);
	}
	return 0;
}
