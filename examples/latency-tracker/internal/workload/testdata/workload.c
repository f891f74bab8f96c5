// Workloads of the latency tracker's tests and benchmarks, in C so that
// they make exactly the system calls they say (package workload builds
// this file with the host's C compiler).
//
//   workload forkmany N  forks N children one at a time, each calling
//                        _exit(0) at once and the parent waiting for it;
//                        prints "forks N reused R" on stderr (apart from a
//                        tracker's output): R children got an id an
//                        earlier one had (the id space wrapped)
//   workload reuse N     after a line on stdin, N times: a child exits,
//                        then the next child is created with its id
//                        (clone3 set_tid, root only); prints "reused K"
//   workload getppid     for each line "B C" on stdin, makes B batches of
//                        C getppid calls and prints the fastest batch's
//                        nanoseconds per call
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	long n = 4194304; /* PID_MAX_LIMIT */

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 4194304;
		fclose(f);
	}
	return n;
}

static int forkmany(long n)
{
	long max = pid_max(), reused = 0;
	unsigned char *seen = calloc(max / 8 + 1, 1);

	if (!seen) {
		perror("workload: calloc");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("workload: fork");
			return 1;
		}
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid) {
			perror("workload: waitpid");
			return 1;
		}
		if (pid < max) {
			if (seen[pid / 8] & (1 << (pid % 8)))
				reused++;
			seen[pid / 8] |= 1 << (pid % 8);
		}
	}
	fprintf(stderr, "forks %ld reused %ld\n", n, reused);
	return 0;
}

/* struct clone_args up to set_tid_size (CLONE_ARGS_SIZE_VER1). */
struct clone_args_v1 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size;
};

static pid_t fork_with_id(pid_t id)
{
	struct clone_args_v1 args;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uintptr_t)&id;
	args.set_tid_size = 1;
	return syscall(SYS_clone3, &args, sizeof(args));
}

static int reuse(long n)
{
	long reused = 0;
	char line[16];

	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (long i = 0; i < n; i++) {
		pid_t first = fork(), second;

		if (first < 0) {
			perror("workload: fork");
			return 1;
		}
		if (first == 0)
			_exit(0); /* exit_group: a call that never returns */
		waitpid(first, NULL, 0);
		usleep(5000); /* what a stale entry would add to the latency */
		second = fork_with_id(first);
		if (second < 0 && errno == EEXIST)
			continue; /* another process took the id meanwhile */
		if (second < 0) {
			fprintf(stderr, "workload: clone3 with set_tid: %s\n", strerror(errno));
			return 3;
		}
		if (second == 0)
			_exit(0);
		waitpid(second, NULL, 0);
		reused++;
	}
	printf("reused %ld\n", reused);
	return 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO: no system call */
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int getppid_loop(void)
{
	long batches, calls;
	char line[64];

	while (fgets(line, sizeof(line), stdin)) {
		double best = 1e18;

		if (sscanf(line, "%ld %ld", &batches, &calls) != 2 || batches <= 0 || calls <= 0)
			return 1;
		for (long b = 0; b < batches; b++) {
			int64_t start = now_ns();

			for (long i = 0; i < calls; i++)
				syscall(SYS_getppid);
			double ns = (double)(now_ns() - start) / calls;
			if (ns < best)
				best = ns;
		}
		printf("%.2f\n", best);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "forkmany"))
		return forkmany(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "reuse"))
		return reuse(atol(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "getppid"))
		return getppid_loop();
	fprintf(stderr, "usage: workload forkmany N | reuse N | getppid\n");
	return 2;
}
