// transport/xdp/xdp_steer.bpf.c: the XDP program of the xdp transport. One instance per
// process, attached through libxdp's dispatcher so several jobs (and other programs) share
// the interface. It hands this process's AF_XDP socket exactly the frames the nic
// transport's packet filter would have given it (our data EtherType, addressed to this
// interface's MAC, carrying this job's id and this pid: steer_config below) and returns
// XDP_PASS for everything else, so the next program in the chain, or the kernel, sees it.
// Until user space fills the configuration (active = 0) it passes every frame.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MAX_MATCHES 4
#define ETHERNET_HEADER 14
#define LARGEST_OFFSET 256

struct steer_match {
  __u32 offset;  // in the frame after the Ethernet header
  __u32 size;    // 1, 2 or 4
  __u32 value;   // little-endian field value
};

// Written by transport/xdp/steer_program.cc (struct SteerConfig there, same layout).
struct steer_config {
  __u32 active;
  __u32 ether_type;  // host order
  __u8 mac[8];       // destination MAC, 6 bytes used
  __u32 match_count;
  struct steer_match match[MAX_MATCHES];
  __u32 owner_pid;    // the process that attached this instance (stale-program sweep)
  __u32 owner_start;  // its start time (clock ticks since boot, /proc/PID/stat field 22)
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct steer_config);
} bsp_config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} bsp_xsks SEC(".maps");

SEC("xdp")
int bsp_xdp_steer(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* end = (void*)(long)ctx->data_end;
  __u32 zero = 0;
  struct steer_config* config = bpf_map_lookup_elem(&bsp_config, &zero);
  if (!config || !config->active) return XDP_PASS;
  __u8* frame = data;
  if ((void*)(frame + ETHERNET_HEADER) > end) return XDP_PASS;
  __u16 type = ((__u16)frame[12] << 8) | frame[13];
  if (type != config->ether_type) return XDP_PASS;
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    if (frame[i] != config->mac[i]) return XDP_PASS;
  }
#pragma unroll
  for (int i = 0; i < MAX_MATCHES; ++i) {
    if (i >= config->match_count) break;
    __u32 offset = config->match[i].offset;
    if (offset > LARGEST_OFFSET) return XDP_PASS;
    __u8* field = frame + ETHERNET_HEADER + offset;
    if ((void*)(field + 4) > end) return XDP_PASS;
    __u32 value = (__u32)field[0] | ((__u32)field[1] << 8) | ((__u32)field[2] << 16) | ((__u32)field[3] << 24);
    __u32 size = config->match[i].size;
    __u32 mask = size >= 4 ? 0xffffffffu : ((1u << (size * 8)) - 1);
    if ((value & mask) != config->match[i].value) return XDP_PASS;
  }
  return bpf_redirect_map(&bsp_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
