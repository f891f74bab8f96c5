//go:build ignore

// Adaptive syscall latency tracker: kernel programs measure the latency of
// the system calls of tracked threads; userspace (UeBPF) programs, run in
// uebpf's VM over the same maps, mark which threads are tracked and set
// each system call's threshold from the observed latencies.
//
// Maps shared by both sides:
//   tracked     bitmaps: tracked threads, then process flags (mmapped)
//   stats       per-CPU, per-syscall counters and log2 histogram (mmapped)
//   hist        the policy's per-syscall histogram, merged over CPUs by
//               the host (mmapped)
//   thresholds  per-syscall threshold in ns, 0: never report (mmapped)
//   start       syscall entry time and number, by thread slot (kernel;
//               uebpf/register clears a thread's slot when it untracks it)
//   events      slow system calls (ring buffer, kernel → user)
//   counters    [0] events dropped because the ring buffer was full
//
// The untracked fast path is one helper call (the current task, for its
// thread id) and one inlined array lookup (its bit); the tracked path adds
// the two clock reads and touches only arrays and this CPU's own counters,
// so it takes no lock and no atomic instruction.
#include "uebpf_helpers.h"

/* The fields of the kernel's struct task_struct the programs read: CO-RE
 * relocations place them where the running kernel's BTF says. */
struct task_struct {
	__s32 pid;  /* thread id */
	__s32 tgid; /* process id */
	__u64 start_time; /* CLOCK_MONOTONIC at fork: tells apart tasks that share an id */
} __attribute__((preserve_access_index));

/* Linux 5.11 on: the task's fields are read directly (BTF), so one call
 * gives the ids and the start time. */
static struct task_struct *(*bpf_get_current_task_btf)(void) = (void *)158;

#define NSYS 512       /* syscall numbers tracked: 0..NSYS-1 */
#define NBUCKETS 40    /* bucket b counts latencies in [2^b, 2^(b+1)) ns */
#define ID_WORDS 65536 /* bitmap words: ids 0..4194303 (PID_MAX_LIMIT) */
#define NSLOTS 65536   /* start slots, by thread id modulo NSLOTS */

/* The bitmaps of map tracked, each ID_WORDS words, in this order. */
#define BM_THREAD 0  /* thread id: its calls are measured (the fast path) */
#define BM_THREADS 1 /* process id: its new threads are tracked */
#define BM_FOLLOW 2  /* process id: its new child processes are tracked */
#define BM_EXCLUDE 3 /* process id: never track its new tasks (system-wide mode) */
#define BM_ON_EXEC 4 /* process id: track it from its next execve on */
#define NBITMAPS 5
#define W_ALL (NBITMAPS * ID_WORDS) /* word: system-wide mode, new tasks tracked */

#define CLONE_THREAD 0x00010000

struct sys_stats {
	__u64 count;
	__u64 sum_ns;
	__u64 slow; /* latencies above the threshold */
	__u64 min_ns;
	__u64 max_ns;
	__u64 buckets[NBUCKETS];
};

/* An entry names the task instance that made it: a thread id is reused
 * once the id space wraps, and a thread that ends in exit or exit_group
 * never returns from it, so a slot can hold an entry of a task long gone. */
struct start {
	__u64 ts;
	__u64 task_start; /* the owner's start_time */
	__u32 tid;        /* the owner: a slot is shared by ids NSLOTS apart */
	__u32 nr;
};

struct event {
	__u64 ts_ns; /* CLOCK_MONOTONIC at syscall exit */
	__u64 latency_ns;
	__u64 threshold_ns;
	__s64 ret;
	__u32 pid;
	__u32 tid;
	__u32 syscall;
	__u32 pad;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NBITMAPS * ID_WORDS + 1);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

/* Slot cpu*NSYS + nr: each CPU counts alone, without atomics. The host
 * sets max_entries to NSYS × the number of possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NSYS);
	__type(key, __u32);
	__type(value, struct sys_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NSYS);
	__type(key, __u32);
	__type(value, struct sys_stats);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NSYS);
	__type(key, __u32);
	__type(value, __u64);
} thresholds SEC(".maps");

/* An array, not a hash: a thread blocked in a call can wake on another
 * CPU, so the entry time is per thread, and a direct-mapped slot costs one
 * inlined lookup where a hash costs a hashed, locked one. Two tracked
 * threads whose ids are NSLOTS apart share a slot; the owner's tag then
 * drops the overwritten measurement instead of reporting a wrong one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NSLOTS);
	__type(key, __u32);
	__type(value, struct start);
} start SEC(".maps");

/* Per-process or per-thread counts, only when the host asks (per_task:
 * 1 by process, 2 by thread); with 0 the verifier drops that code, so the
 * fast path does not pay for it. */
volatile const __u32 per_task = 0;

struct task_key {
	__u32 id; /* process or thread id */
	__u32 nr;
};

struct task_stats {
	__u64 count;
	__u64 sum_ns;
	__u64 slow;
	__u64 max_ns;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct task_key);
	__type(value, struct task_stats);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline int test_bit(__u32 bitmap, __u32 id)
{
	__u32 word = bitmap * ID_WORDS + ((id >> 6) & (ID_WORDS - 1));
	__u64 *w = bpf_map_lookup_elem(&tracked, &word);

	return w && (*w >> (id & 63)) & 1;
}

static __always_inline void set_bit(__u32 bitmap, __u32 id, int on)
{
	__u32 word = bitmap * ID_WORDS + ((id >> 6) & (ID_WORDS - 1));
	__u64 *w = bpf_map_lookup_elem(&tracked, &word);

	if (!w)
		return;
	if (on)
		__sync_fetch_and_or(w, 1ULL << (id & 63));
	else
		__sync_fetch_and_and(w, ~(1ULL << (id & 63)));
}

/* The start slot of thread tid. */
static __always_inline struct start *slot_of(__u32 tid)
{
	__u32 slot = tid & (NSLOTS - 1);

	return bpf_map_lookup_elem(&start, &slot);
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

static __noinline void count_task(__u32 id, __u32 nr, __u64 lat, __u32 slow)
{
	struct task_key k = { .id = id, .nr = nr };
	struct task_stats *ts, fresh = {};

	ts = bpf_map_lookup_elem(&tasks, &k);
	if (!ts) {
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		bpf_map_update_elem(&tasks, &k, &fresh, BPF_NOEXIST);
		ts = bpf_map_lookup_elem(&tasks, &k);
		if (!ts)
			return;
	}
	/* Shared by the process's threads on every CPU: atomic. */
	__sync_fetch_and_add(&ts->count, 1);
	__sync_fetch_and_add(&ts->sum_ns, lat);
	if (slow)
		__sync_fetch_and_add(&ts->slow, 1);
	if (lat > ts->max_ns)
		ts->max_ns = lat; /* a race can lose a maximum, rarely */
}

SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = task->pid;
	struct start *s;

	if (!test_bit(BM_THREAD, tid))
		return 0;
	s = slot_of(tid);
	if (!s)
		return 0;
	s->tid = tid;
	s->task_start = task->start_time;
	s->nr = ctx->args[1];
	s->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = task->pid, nr, b, idx, zero = 0;
	__u64 now, lat, limit, *thr, *dropped;
	struct sys_stats *st;
	struct start *s;
	struct event *e;

	if (!test_bit(BM_THREAD, tid))
		return 0;
	now = bpf_ktime_get_ns();
	s = slot_of(tid);
	/* No entry of this task: tracking began inside this call, the slot
	 * was taken by another thread, or this is a new task's return from
	 * fork (the entry, if any, is of an earlier task with this id). */
	if (!s || s->tid != tid || s->task_start != task->start_time || !s->ts || s->ts > now)
		return 0;
	lat = now - s->ts;
	nr = s->nr;
	s->ts = 0;
	if (nr >= NSYS)
		return 0;
	idx = bpf_get_smp_processor_id() * NSYS + nr;
	st = bpf_map_lookup_elem(&stats, &idx);
	thr = bpf_map_lookup_elem(&thresholds, &nr);
	if (!st || !thr)
		return 0;
	b = log2_u64(lat);
	if (b >= NBUCKETS)
		b = NBUCKETS - 1;
	/* This CPU's slot: raw tracepoint programs run with migration off. */
	st->count++;
	st->sum_ns += lat;
	st->buckets[b]++;
	if (lat > st->max_ns)
		st->max_ns = lat;
	if (lat < st->min_ns || !st->min_ns)
		st->min_ns = lat;
	limit = *thr;
	if (per_task)
		count_task(per_task == 1 ? task->tgid : tid, nr, lat, limit && lat > limit);

	if (!limit || lat <= limit)
		return 0;
	st->slow++;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		dropped = bpf_map_lookup_elem(&counters, &zero);
		if (dropped)
			__sync_fetch_and_add(dropped, 1);
		return 0;
	}
	e->ts_ns = now;
	e->latency_ns = lat;
	e->threshold_ns = limit;
	e->ret = ctx->args[1];
	e->pid = task->tgid;
	e->tid = tid;
	e->syscall = nr;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* ---- task tracking: new threads and processes, exec, exit ---- */

/* tracepoint/task/task_newtask, as in its format file. */
struct newtask_args {
	__u64 common;
	__s32 pid;
	char comm[16];
	__u64 clone_flags;
	__s16 oom_score_adj;
};

// A new task inherits tracking from the process that creates it (it runs
// in the parent, before the child can make a system call): a new thread
// when the process's threads are tracked, a new process when the parent's
// children are followed (and the child's own children then too).
SEC("tracepoint/task/task_newtask")
int task_newtask(struct newtask_args *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32, child = ctx->pid;
	__u32 wall = W_ALL;
	__u64 *all = bpf_map_lookup_elem(&tracked, &wall);
	int on, sysw = all && *all && !test_bit(BM_EXCLUDE, parent);

	if (ctx->clone_flags & CLONE_THREAD) {
		on = sysw || test_bit(BM_THREADS, parent);
	} else {
		on = sysw || test_bit(BM_FOLLOW, parent);
		if (test_bit(BM_FOLLOW, parent)) {
			set_bit(BM_THREADS, child, 1);
			set_bit(BM_FOLLOW, child, 1);
		}
	}
	/* Always written: a stale bit of a reused id must not leak. */
	set_bit(BM_THREAD, child, on);
	return 0;
}

/* tracepoint/sched/sched_process_exec, as in its format file. */
struct exec_args {
	__u64 common;
	__u32 filename;
	__s32 pid;
	__s32 old_pid;
};

// A process waiting for its execve (the command of `-- cmd`) is tracked
// from the new program on; a tracked thread that executes a program from
// a non-main thread takes the main thread's id and keeps being tracked.
SEC("tracepoint/sched/sched_process_exec")
int sched_process_exec(struct exec_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = ctx->pid, old = ctx->old_pid, nr;
	struct start *from, *to;
	__u64 ts;

	if (test_bit(BM_ON_EXEC, pid)) {
		set_bit(BM_ON_EXEC, pid, 0);
		set_bit(BM_THREADS, pid, 1);
		set_bit(BM_THREAD, pid, 1);
	} else if (old != pid && test_bit(BM_THREAD, old)) {
		set_bit(BM_THREAD, old, 0);
		set_bit(BM_THREAD, pid, 1);
		/* The thread has taken the main thread's id and start time
		 * (the main thread has exited, and its slot was cleared): its
		 * execve, entered under the old id, returns under the new. */
		from = slot_of(old);
		to = slot_of(pid);
		if (from && to && from->tid == old) {
			ts = from->ts;
			nr = from->nr;
			from->ts = 0; /* first: the two may be one slot */
			to->tid = pid;
			to->task_start = task->start_time;
			to->nr = nr;
			to->ts = ts;
		}
	}
	return 0;
}

/* tracepoint/sched/sched_process_exit, as in its format file since
 * Linux 6.16 (group_dead); the host sets exit_group_dead when the running
 * kernel's format has it, else the main thread's exit stands for the
 * process's. */
struct exit_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__u8 group_dead;
};

volatile const __u8 exit_group_dead = 0;

// An exiting thread is no longer tracked (its id will be reused), and its
// slot is cleared whether it was tracked or not: its last call (exit,
// exit_group, or the one a fatal signal ended) never returns. When the
// process ends, its flags go too.
SEC("tracepoint/sched/sched_process_exit")
int sched_process_exit(struct exit_args *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = task->pid, tgid = task->tgid;
	struct start *s = slot_of(tid);
	int process_ends;

	if (s && s->tid == tid)
		s->ts = 0;
	if (test_bit(BM_THREAD, tid))
		set_bit(BM_THREAD, tid, 0);
	/* Without the field, the branch that reads it is dead code the
	 * verifier never checks. */
	if (exit_group_dead)
		process_ends = ctx->group_dead;
	else
		process_ends = tid == tgid;
	if (process_ends) {
		set_bit(BM_THREADS, tgid, 0);
		set_bit(BM_FOLLOW, tgid, 0);
		set_bit(BM_ON_EXEC, tgid, 0);
	}
	return 0;
}

/* ---- userspace side: runs in uebpf's VM ---- */

struct register_ctx {
	__u32 id;     /* thread or process id */
	__u16 track;  /* 1: set the bit, 0: clear it */
	__u16 bitmap; /* BM_THREAD, BM_THREADS, ... */
};

// Sets or clears id's bit in one of the bitmaps; returns whether it was
// set before. The kernel sees the change on the thread's next system call.
SEC("uebpf/register")
int register_id(struct register_ctx *c)
{
	__u32 word = c->bitmap * ID_WORDS + ((c->id >> 6) & (ID_WORDS - 1));
	__u64 bit = 1ULL << (c->id & 63), old, *w;
	struct start *s;

	if (c->bitmap >= NBITMAPS)
		return -1;
	w = bpf_map_lookup_elem(&tracked, &word);
	if (!w)
		return -1;
	if (c->track)
		return (__sync_fetch_and_or(w, bit) & bit) != 0;
	old = __sync_fetch_and_and(w, ~bit);
	/* The entry of a call in flight would be matched by the exit of a
	 * later call, were the thread tracked again in the middle of it. */
	s = slot_of(c->id);
	if (c->bitmap == BM_THREAD && s && s->tid == c->id)
		s->ts = 0;
	return (old & bit) != 0;
}

#define POLICY_STATIC 0
#define POLICY_PERCENTILE 1
#define POLICY_STDDEV 2

struct policy_ctx {
	__u32 policy;
	__u32 permille;   /* percentile, in tenths of a percent (990: p99) */
	__u32 factor_pct; /* percentile policy: threshold = percentile × factor/100 */
	__u32 k_pct;      /* stddev policy: threshold = mean + k/100 × stddev */
	__u64 min_samples; /* fewer samples: initial_ns */
	__u64 initial_ns;
	__u64 static_ns;
	__u64 floor_ns;    /* no adaptive threshold below this */
	__u32 decay;       /* halve the histograms after use */
	__u32 pad;
	__u64 changed;     /* out: thresholds changed */
	__u64 adapted;     /* out: syscalls with an adapted threshold */
};

// The upper end of bucket b.
static __always_inline __u64 bucket_top(__u32 b)
{
	return (2ULL << b) - 1;
}

// The middle of bucket b, standing for its latencies.
static __always_inline __u64 bucket_mid(__u32 b)
{
	return b ? 3ULL << (b - 1) : 1;
}

static __always_inline __u64 absdiff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

/* The loops over buckets are bpf_loop callbacks: a verifier checks each
 * body once, whatever the number of iterations. */
struct walk {
	struct sys_stats *st;
	__u64 total, want, cum, mean, maxd, var, n;
	__u32 shift, cshift, result;
};

static long sum_cb(__u32 b, struct walk *w)
{
	if (b >= NBUCKETS)
		return 1;
	w->total += w->st->buckets[b];
	return 0;
}

static long percentile_cb(__u32 b, struct walk *w)
{
	if (b >= NBUCKETS)
		return 1;
	w->cum += w->st->buckets[b];
	if (w->cum < w->want)
		return 0;
	w->result = b;
	return 1;
}

static long maxd_cb(__u32 b, struct walk *w)
{
	__u64 d;

	if (b >= NBUCKETS || !w->st->buckets[b])
		return 0;
	d = absdiff(bucket_mid(b), w->mean);
	if (d > w->maxd)
		w->maxd = d;
	return 0;
}

// var += c·d²/n without overflow: d < 2^31 and c, n < 2^31 once scaled.
static long var_cb(__u32 b, struct walk *w)
{
	__u64 c, d, sq;

	if (b >= NBUCKETS || !w->n)
		return 1;
	c = w->st->buckets[b] >> w->cshift;
	d = absdiff(bucket_mid(b), w->mean) >> w->shift;
	sq = d * d;
	w->var += (sq / w->n) * c + (sq % w->n) * c / w->n;
	return 0;
}

static long decay_cb(__u32 b, struct walk *w)
{
	if (b >= NBUCKETS)
		return 1;
	/* Forget half of the past (the host adds new counts between runs). */
	w->st->buckets[b] -= w->st->buckets[b] >> 1;
	return 0;
}

// Scales distances and counts down below 2^31.
static long scale_cb(__u32 i, struct walk *w)
{
	int more = 0;

	if ((w->maxd >> w->shift) >= (1ULL << 31)) {
		w->shift++;
		more = 1;
	}
	if ((w->total >> w->cshift) >= (1ULL << 31)) {
		w->cshift++;
		more = 1;
	}
	return !more;
}

struct sqrt_state {
	__u64 v, r, bit;
};

static long isqrt_cb(__u32 i, struct sqrt_state *s)
{
	if (s->v >= s->r + s->bit) {
		s->v -= s->r + s->bit;
		s->r = (s->r >> 1) + s->bit;
	} else {
		s->r >>= 1;
	}
	s->bit >>= 2;
	return 0;
}

// mean + k·stddev: the kernel's exact mean, the deviation from the
// histogram's bucket middles.
static __noinline __u64 mean_stddev(struct walk *w, __u32 k_pct)
{
	struct sqrt_state sq = { .bit = 1ULL << 62 };

	if (w->st->count)
		w->mean = w->st->sum_ns / w->st->count;
	bpf_loop(NBUCKETS, maxd_cb, w, 0);
	bpf_loop(64, scale_cb, w, 0);
	w->n = w->total >> w->cshift;
	bpf_loop(NBUCKETS, var_cb, w, 0);
	sq.v = w->var;
	bpf_loop(32, isqrt_cb, &sq, 0);
	return w->mean + (sq.r << w->shift) * k_pct / 100;
}

static __always_inline __u64 st_count(struct sys_stats *st)
{
	return st->count;
}

static long policy_one(__u32 id, struct policy_ctx *c)
{
	struct walk w = {};
	__u64 want, *thr;

	w.st = bpf_map_lookup_elem(&hist, &id);
	thr = bpf_map_lookup_elem(&thresholds, &id);
	if (!w.st || !thr)
		return 1;
	/* Most syscalls are never called: skip their buckets. */
	if (st_count(w.st))
		bpf_loop(NBUCKETS, sum_cb, &w, 0);

	if (c->policy == POLICY_STATIC) {
		want = c->static_ns;
	} else if (w.total < c->min_samples || !w.total) {
		want = c->initial_ns;
	} else {
		if (c->policy == POLICY_STDDEV) {
			want = mean_stddev(&w, c->k_pct);
		} else {
			w.want = (w.total * c->permille + 999) / 1000;
			w.result = NBUCKETS - 1;
			bpf_loop(NBUCKETS, percentile_cb, &w, 0);
			want = bucket_top(w.result) * c->factor_pct / 100;
		}
		if (want < c->floor_ns)
			want = c->floor_ns;
		c->adapted++;
	}
	if (*thr != want) {
		*thr = want; /* the kernel uses it on the next syscall */
		c->changed++;
	}
	if (c->decay && w.total) {
		bpf_loop(NBUCKETS, decay_cb, &w, 0);
		w.st->sum_ns -= w.st->sum_ns >> 1;
		w.st->count -= w.st->count >> 1;
	}
	return 0;
}

// Sets every syscall's threshold according to the policy in the context.
SEC("uebpf/policy")
int policy(struct policy_ctx *c)
{
	c->changed = 0;
	c->adapted = 0;
	bpf_loop(NSYS, policy_one, c, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
