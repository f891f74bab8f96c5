/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0 */
/*
 * uebpf_helpers.h: the few definitions a BPF C program needs to be loaded by
 * uebpf (or by libbpf/cilium-ebpf): section and map-definition macros, and
 * the standard helpers declared by their Linux helper numbers.
 *
 * It stands alone on purpose: only <linux/bpf.h> (from the kernel's uapi
 * headers, Debian package linux-libc-dev) is needed, not libbpf. Compile with
 *
 *   clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu \
 *            -I<this folder> -c prog.bpf.c -o prog.bpf.o
 */
#ifndef UEBPF_HELPERS_H
#define UEBPF_HELPERS_H

#include <linux/types.h>
#include <linux/bpf.h>

/* Where a program or map lives. uebpf runs programs of sections "uebpf" and
 * "uebpf/..." in userspace; other sections are kernel programs. */
#define SEC(name) __attribute__((section(name), used))

/* BTF map definitions, as in libbpf: the loader reads the numbers from the
 * types of the members, so the struct never holds data. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __array(name, val) typeof(val) *name[]

#undef __always_inline /* <linux/stddef.h> defines a weaker one */
#define __always_inline inline __attribute__((always_inline))
#define __noinline __attribute__((noinline))

/* Pinning (LIBBPF_PIN_*), kept by uebpf for the kernel bridge. */
#define UEBPF_PIN_NONE 0
#define UEBPF_PIN_BY_NAME 1

/* The standard helpers, numbered as Linux's enum bpf_func_id. Calling
 * through a constant function pointer makes clang emit "call <number>". */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static long (*bpf_trace_printk)(const char *fmt, __u32 fmt_size, ...) = (void *)6;
static __u32 (*bpf_get_prandom_u32)(void) = (void *)7;
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static long (*bpf_tail_call)(void *ctx, void *prog_array_map, __u32 index) = (void *)12;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static __u64 (*bpf_get_current_uid_gid)(void) = (void *)15;
static long (*bpf_get_current_comm)(void *buf, __u32 size_of_buf) = (void *)16;
static long (*bpf_perf_event_output)(void *ctx, void *map, __u64 flags, void *data, __u64 size) = (void *)25;
static long (*bpf_map_push_elem)(void *map, const void *value, __u64 flags) = (void *)87;
static long (*bpf_map_pop_elem)(void *map, void *value) = (void *)88;
static long (*bpf_map_peek_elem)(void *map, void *value) = (void *)89;
static long (*bpf_probe_read_user)(void *dst, __u32 size, const void *unsafe_ptr) = (void *)112;
static long (*bpf_probe_read_user_str)(void *dst, __u32 size, const void *unsafe_ptr) = (void *)114;
static __u64 (*bpf_ktime_get_boot_ns)(void) = (void *)125;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size, __u64 flags) = (void *)130;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size, __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static void (*bpf_ringbuf_discard)(void *data, __u64 flags) = (void *)133;
static __u64 (*bpf_ringbuf_query)(void *ringbuf, __u64 flags) = (void *)134;
static long (*bpf_snprintf)(char *str, __u32 str_size, const char *fmt, __u64 *data, __u32 data_len) = (void *)165;
static __u64 (*bpf_get_func_ip)(void *ctx) = (void *)173;
static long (*bpf_loop)(__u32 nr_loops, void *callback_fn, void *callback_ctx, __u64 flags) = (void *)181;
static long (*bpf_strncmp)(const char *s1, __u32 s1_sz, const char *s2) = (void *)182;

/* bpf_printk("fmt", args...) as in libbpf: the format lives on the stack. */
#define bpf_printk(fmt, ...)                                              \
	({                                                                \
		char ____fmt[] = fmt;                                     \
		bpf_trace_printk(____fmt, sizeof(____fmt), ##__VA_ARGS__); \
	})

#endif /* UEBPF_HELPERS_H */
