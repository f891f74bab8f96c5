/*
 * ctfdiscards DIR: the number of events an LTTng-UST trace says it
 * discarded, read from its packet contexts, without decoding any event
 * (babeltrace2 reports the same numbers, but only by decoding the whole
 * trace through its text sink).
 *
 * The layout is lttng-ust 2.13's, as its metadata declares it on a 64-bit
 * host, in native byte order:
 *   packet.header  uint32 magic (0xC1FC1FC1), uint8 uuid[16], uint32
 *                  stream_id, uint64 stream_instance_id       (bytes 0-31)
 *   packet.context uint64 timestamp_begin, timestamp_end, content_size,
 *                  packet_size (bits), packet_seq_num, unsigned long
 *                  events_discarded, uint32 cpu_id            (bytes 32-83)
 * events_discarded is the stream's count so far when the packet was
 * completed, so a stream's total is its largest value. Not necessarily
 * its last packet's: a writer preempted between reserve and commit
 * completes its packet after later ones, and with a larger count (the
 * consumer takes that decrease for a wrap-around and reports 2^63 + n).
 * Every packet's magic is checked: any other layout is an error, not a
 * wrong count.
 *
 * Prints: streams=N packets=N discarded=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAGIC 0xC1FC1FC1u

static uint64_t streams, packets, discarded;

static int stream(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	unsigned char ctx[84];
	uint64_t most = 0;
	off_t off = 0;
	FILE *f;

	/* Data streams only: not the metadata stream, not the index files. */
	if (type != FTW_F || !strcmp(base, "metadata") || strstr(path, "/index/"))
		return 0;
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ctfdiscards: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (off < st->st_size) {
		uint32_t magic;
		uint64_t size_bits, count;

		if (fseeko(f, off, SEEK_SET) || fread(ctx, sizeof(ctx), 1, f) != 1) {
			fprintf(stderr, "ctfdiscards: %s: short packet at byte %lld\n",
				path, (long long)off);
			fclose(f);
			return 1;
		}
		memcpy(&magic, ctx, 4);
		memcpy(&size_bits, ctx + 56, 8);
		memcpy(&count, ctx + 72, 8);
		if (count > most)
			most = count;
		if (magic != MAGIC || size_bits == 0 || size_bits % 8) {
			fprintf(stderr, "ctfdiscards: %s: byte %lld is not an lttng-ust 2.13 "
				"packet (magic %#x, packet_size %llu bits)\n",
				path, (long long)off, magic, (unsigned long long)size_bits);
			fclose(f);
			return 1;
		}
		off += (off_t)(size_bits / 8);
		packets++;
	}
	fclose(f);
	streams++;
	discarded += most;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: ctfdiscards TRACE_DIR\n", stderr);
		return 2;
	}
	int r = nftw(argv[1], stream, 16, FTW_PHYS);
	if (r == -1)
		fprintf(stderr, "ctfdiscards: %s: %s\n", argv[1], strerror(errno));
	if (r)
		return 1;
	printf("streams=%llu packets=%llu discarded=%llu\n", (unsigned long long)streams,
	       (unsigned long long)packets, (unsigned long long)discarded);
	return 0;
}
