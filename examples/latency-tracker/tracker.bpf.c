//go:build ignore

// Adaptive syscall latency tracker: kernel programs measure the latency of
// the system calls of tracked threads; userspace (UeBPF) programs, run in
// uebpf's VM over the same maps, mark which threads are tracked and set
// each system call's threshold from the observed latencies.
//
// Maps shared by both sides:
//   tracked     bitmaps of tracked thread ids and process ids (mmapped)
//   stats       per-syscall counters and log2 latency histogram (mmapped)
//   thresholds  per-syscall threshold in ns, 0: never report (mmapped)
//   start       syscall entry time and number, by thread (kernel only)
//   events      slow system calls (ring buffer, kernel → user)
//   counters    [0] events dropped because the ring buffer was full
#include "uebpf_helpers.h"

#define NSYS 512       /* syscall numbers tracked: 0..NSYS-1 */
#define NBUCKETS 40    /* bucket b counts latencies in [2^b, 2^(b+1)) ns */
#define ID_WORDS 65536 /* bitmap words: ids 0..4194303 (PID_MAX_LIMIT) */

struct sys_stats {
	__u64 count;
	__u64 sum_ns;
	__u64 slow; /* latencies above the threshold */
	__u64 buckets[NBUCKETS];
};

struct start {
	__u64 ts;
	__u64 id;
};

struct event {
	__u64 ts_ns; /* CLOCK_MONOTONIC at syscall exit */
	__u64 latency_ns;
	__u64 threshold_ns;
	__u32 pid;
	__u32 tid;
	__u32 syscall;
	__s32 ret;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2 * ID_WORDS); /* threads, then processes */
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

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
	__type(value, __u64);
} thresholds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct start);
} start SEC(".maps");

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

// A thread is tracked if its thread id is marked in the thread half of
// the bitmap, or its process id in the process half. (Thread and process
// ids share one number space: the main thread's id is the process id, so
// one bitmap could not tell "this thread" from "this process".)
static __always_inline int is_tracked(__u64 pid_tgid)
{
	__u32 tid = pid_tgid, tgid = pid_tgid >> 32;
	__u32 wt = tid >> 6, wp = ID_WORDS + (tgid >> 6);
	__u64 *w = bpf_map_lookup_elem(&tracked, &wt);

	if (w && (*w >> (tid & 63)) & 1)
		return 1;
	w = bpf_map_lookup_elem(&tracked, &wp);
	return w && (*w >> (tgid & 63)) & 1;
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

SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = pid_tgid;
	struct start *s, fresh;

	if (!is_tracked(pid_tgid))
		return 0;
	s = bpf_map_lookup_elem(&start, &tid);
	if (s) {
		s->id = ctx->args[1];
		s->ts = bpf_ktime_get_ns();
		return 0;
	}
	fresh.id = ctx->args[1];
	fresh.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &fresh, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = pid_tgid, id, b, zero = 0;
	__u64 lat, limit, *thr, *dropped;
	struct sys_stats *st;
	struct start *s;
	struct event *e;

	if (!is_tracked(pid_tgid))
		return 0;
	s = bpf_map_lookup_elem(&start, &tid);
	if (!s || !s->ts || s->ts > now)
		return 0;
	lat = now - s->ts;
	id = s->id;
	s->ts = 0;
	if (id >= NSYS)
		return 0;
	st = bpf_map_lookup_elem(&stats, &id);
	thr = bpf_map_lookup_elem(&thresholds, &id);
	if (!st || !thr)
		return 0;
	b = log2_u64(lat);
	if (b >= NBUCKETS)
		b = NBUCKETS - 1;
	__sync_fetch_and_add(&st->count, 1);
	__sync_fetch_and_add(&st->sum_ns, lat);
	__sync_fetch_and_add(&st->buckets[b], 1);

	limit = *thr;
	if (!limit || lat <= limit)
		return 0;
	__sync_fetch_and_add(&st->slow, 1);
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
	e->pid = pid_tgid >> 32;
	e->tid = tid;
	e->syscall = id;
	e->ret = ctx->args[1];
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* ---- userspace side: runs in uebpf's VM ---- */

struct register_ctx {
	__u32 id;      /* thread or process id */
	__u16 track;   /* 1: track, 0: stop tracking */
	__u16 process; /* 1: id is a process: all its threads */
};

// Marks id tracked or not; returns whether it was tracked before. The
// kernel sees the change on the thread's next system call.
SEC("uebpf/register")
int register_id(struct register_ctx *c)
{
	__u32 word = (c->id >> 6) + (c->process ? ID_WORDS : 0);
	__u64 bit = 1ULL << (c->id & 63), old, *w;

	w = bpf_map_lookup_elem(&tracked, &word);
	if (!w)
		return -1;
	if (c->track)
		old = __sync_fetch_and_or(w, bit);
	else
		old = __sync_fetch_and_and(w, ~bit);
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
	/* Forget half of the past; atomic, as the kernel adds concurrently. */
	__sync_fetch_and_add(&w->st->buckets[b], -(w->st->buckets[b] >> 1));
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

	w.st = bpf_map_lookup_elem(&stats, &id);
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
		__sync_fetch_and_add(&w.st->sum_ns, -(w.st->sum_ns >> 1));
		__sync_fetch_and_add(&w.st->count, -(w.st->count >> 1));
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
