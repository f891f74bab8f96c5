// An application helper: the application registers helper 0x10000, which
// returns a configuration value for a key.
#include "uebpf_helpers.h"

static __u64 (*app_config)(__u32 key) = (void *)0x10000;

SEC("uebpf/tracepoint/config")
__u64 read_config(__u32 *key)
{
	return app_config(*key) + 1;
}

char LICENSE[] SEC("license") = "Apache-2.0";
