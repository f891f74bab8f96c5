/*
 * bench: fires the lttng-ust tracepoint bench:ev from T threads, N events
 * per thread per round, and prints one machine-readable line:
 *
 *   LABEL threads=T events=N rounds=R enabled=0|1 ns_median=.. ns_min=..
 *         ns_max=.. cpu_ns_median=.. fired=.. fire_wall_s=.. offered_per_s=..
 *
 * ns_* are per thread and per event: each thread times its own loop with
 * CLOCK_MONOTONIC, and the median is over every (thread, round) sample of
 * the timed rounds. cpu_ns_median is the same median of the thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID): on a busy machine, wall time also counts
 * the time a thread waits for a CPU. fired counts the warm-up rounds too.
 * fire_wall_s is the wall time of the timed rounds, from the moment all
 * threads are released until the last one is done (pauses between rounds
 * excluded); offered_per_s is their events / fire_wall_s.
 *
 * -P FILE maps FILE and stores there, every 4096 events, how many events
 * each thread has fired (an int64 a thread): what a kill -9 leaves behind.
 *
 * The payload decides what the filter of run (a > 100 && s == "keep*")
 * does with each event:
 *   keep   a=1000, s="keep-0123456789": every event matches
 *   drop   a=1000, s="drop-0123456789": the whole filter runs, then drops it
 *   early  a=1,    s="keep-0123456789": a > 100 fails, s is not compared
 * b is the event's index in its thread, c the thread's index.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_tp.h"

/* Progress is published every chunk events: often enough for kill -9, and
 * kept out of the inner loop. */
#define CHUNK 4096

struct config {
	int threads;
	long events;
	int rounds;
	int warmup;
	int pause_ms;
	const char *label;
	const char *expect; /* "on", "off" or NULL */
	int64_t a;
	char s[16];
};

struct worker {
	pthread_t tid;
	int index;
	const struct config *cfg;
	pthread_barrier_t *barrier;
	double *ns;  /* wall ns per event, one per round (warm-up included) */
	double *cpu; /* CPU ns per event, likewise */
	volatile int64_t *progress; /* events fired so far, or NULL */
};

static double clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void die(const char *msg)
{
	fprintf(stderr, "bench: %s\n", msg);
	exit(2);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct config *cfg = w->cfg;
	int64_t c = w->index, fired = 0;

	for (int r = 0; r < cfg->warmup + cfg->rounds; r++) {
		pthread_barrier_wait(w->barrier);
		double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns();
		for (long done = 0; done < cfg->events;) {
			long end = done + CHUNK < cfg->events ? done + CHUNK : cfg->events;
			for (long i = done; i < end; i++)
				lttng_ust_tracepoint(bench, ev, cfg->a, (int64_t)i, c, cfg->s);
			fired += end - done;
			done = end;
			if (w->progress)
				__atomic_store_n(w->progress, fired, __ATOMIC_RELAXED);
		}
		w->ns[r] = (now_ns() - t0) / (double)cfg->events;
		w->cpu[r] = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)cfg->events;
		pthread_barrier_wait(w->barrier);
	}
	return NULL;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* sorted_samples: the wall (or with cpu, CPU) ns per event of every
 * thread's timed rounds, the ones after its warm-up, sorted. */
static double *sorted_samples(const struct worker *w, const struct config *cfg, int cpu, size_t *n)
{
	double *s = calloc((size_t)cfg->threads * (size_t)cfg->rounds, sizeof(*s));

	if (!s)
		die("out of memory");
	*n = 0;
	for (int i = 0; i < cfg->threads; i++)
		for (int r = cfg->warmup; r < cfg->warmup + cfg->rounds; r++)
			s[(*n)++] = cpu ? w[i].cpu[r] : w[i].ns[r];
	qsort(s, *n, sizeof(*s), cmp_double);
	return s;
}

static double median(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static long parse_long(const char *s, const char *what, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min) {
		fprintf(stderr, "bench: %s: %s is not a whole number >= %ld\n", what, s, min);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fputs("usage: bench [-t THREADS] [-n EVENTS] [-r ROUNDS] [-w WARMUP] [-p PAUSE_MS]\n"
	      "             [-m keep|drop|early] [-e on|off] [-l LABEL] [-P PROGRESS_FILE]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct config cfg = {
		.threads = 1, .events = 1000000, .rounds = 5, .warmup = 1,
		.label = "bench", .a = 1000,
	};
	const char *mode = "keep", *progress_path = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "t:n:r:w:p:m:e:l:P:")) != -1) {
		switch (opt) {
		case 't': cfg.threads = parse_long(optarg, "-t", 1); break;
		case 'n': cfg.events = parse_long(optarg, "-n", 1); break;
		case 'r': cfg.rounds = parse_long(optarg, "-r", 1); break;
		case 'w': cfg.warmup = parse_long(optarg, "-w", 0); break;
		case 'p': cfg.pause_ms = parse_long(optarg, "-p", 0); break;
		case 'm': mode = optarg; break;
		case 'e': cfg.expect = optarg; break;
		case 'l': cfg.label = optarg; break;
		case 'P': progress_path = optarg; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	/* 15 characters and the NUL: the array is 16 bytes either way. */
	if (!strcmp(mode, "keep"))
		memcpy(cfg.s, "keep-0123456789", 16);
	else if (!strcmp(mode, "drop"))
		memcpy(cfg.s, "drop-0123456789", 16);
	else if (!strcmp(mode, "early")) {
		memcpy(cfg.s, "keep-0123456789", 16);
		cfg.a = 1;
	} else
		die("-m: want keep, drop or early");

	/* The session daemon has answered by now (lttng-ust's constructor
	 * waits for it, LTTNG_UST_REGISTER_TIMEOUT): check that it enabled
	 * the event, or did not, as the caller expects. */
	int enabled = lttng_ust_tracepoint_enabled(bench, ev) ? 1 : 0;
	if (cfg.expect) {
		if (strcmp(cfg.expect, "on") && strcmp(cfg.expect, "off"))
			die("-e: want on or off");
		if (enabled != !strcmp(cfg.expect, "on")) {
			fprintf(stderr, "bench: %s: tracepoint bench:ev is %s, want %s "
				"(is the session started, the session daemon running?)\n",
				cfg.label, enabled ? "enabled" : "disabled", cfg.expect);
			return 1;
		}
	}

	volatile int64_t *progress = NULL;
	if (progress_path) {
		size_t size = sizeof(int64_t) * (size_t)cfg.threads;
		int fd = open(progress_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
			perror(progress_path);
			return 2;
		}
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			perror(progress_path);
			return 2;
		}
		progress = p;
		close(fd);
	}

	int total_rounds = cfg.warmup + cfg.rounds;
	struct worker *w = calloc((size_t)cfg.threads, sizeof(*w));
	double *ns = calloc((size_t)cfg.threads * (size_t)total_rounds, sizeof(*ns));
	double *cpu = calloc((size_t)cfg.threads * (size_t)total_rounds, sizeof(*cpu));
	pthread_barrier_t barrier;
	if (!w || !ns || !cpu)
		die("out of memory");
	pthread_barrier_init(&barrier, NULL, (unsigned)cfg.threads + 1);
	for (int i = 0; i < cfg.threads; i++) {
		w[i] = (struct worker){
			.index = i, .cfg = &cfg, .barrier = &barrier,
			.ns = ns + (size_t)i * (size_t)total_rounds,
			.cpu = cpu + (size_t)i * (size_t)total_rounds,
			.progress = progress ? progress + i : NULL,
		};
		if (pthread_create(&w[i].tid, NULL, work, &w[i]))
			die("pthread_create failed");
	}

	double wall = 0;
	for (int r = 0; r < total_rounds; r++) {
		pthread_barrier_wait(&barrier);
		double t0 = now_ns();
		pthread_barrier_wait(&barrier);
		if (r >= cfg.warmup)
			wall += now_ns() - t0;
		if (cfg.pause_ms && r + 1 < total_rounds)
			usleep((useconds_t)cfg.pause_ms * 1000);
	}
	for (int i = 0; i < cfg.threads; i++)
		pthread_join(w[i].tid, NULL);

	size_t n;
	double *wall_s = sorted_samples(w, &cfg, 0, &n), *cpu_s = sorted_samples(w, &cfg, 1, &n);
	long long fired = (long long)cfg.threads * cfg.events * total_rounds;
	double timed = (double)cfg.threads * (double)cfg.events * cfg.rounds;

	printf("%s threads=%d events=%ld rounds=%d enabled=%d ns_median=%.2f ns_min=%.2f "
	       "ns_max=%.2f cpu_ns_median=%.2f fired=%lld fire_wall_s=%.3f offered_per_s=%.0f\n",
	       cfg.label, cfg.threads, cfg.events, cfg.rounds, enabled, median(wall_s, n), wall_s[0],
	       wall_s[n - 1], median(cpu_s, n), fired, wall / 1e9, timed / (wall / 1e9));
	return 0;
}
