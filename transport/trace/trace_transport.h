// transport/trace/trace_transport.h: a decorator that writes every frame a process sends
// and receives to a .pcap file (libpcap), readable by tcpdump and Wireshark, over any
// transport (bsprun --trace=FILE.pcap; each process writes FILE.pcap with ".<pid>"
// before the extension). Frames get a pseudo Ethernet header: EtherType 0x88B5, source
// and destination MAC 02:00:00:00:<pid high>:<pid low>, so filters like
// `ether proto 0x88b5` and `ether dst 02:00:00:00:00:01` work.
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

// The per-process file name for a trace path: "run.pcap", pid 3 -> "run.3.pcap".
std::string trace_file_for(const std::string& path, int pid);

// Wraps inner; the trace is a new file, mode 0600 (auth/private_file.h): an existing one
// is refused unless overwrite. Throws std::runtime_error if the file cannot be written.
std::unique_ptr<Transport> wrap_with_trace(std::unique_ptr<Transport> inner, const std::string& path, int pid,
                                           bool overwrite = false);

}  // namespace bsp::transport
