// transport/shm/host_identity.h: which processes can share memory. Two processes are on
// "one host" for the shm transport when they run under one kernel (boot id) in one
// network namespace and one pid namespace: then an OS pid means the same process to both
// and /proc/<pid>/fd reaches its descriptors. (Separate network namespaces are separate
// hosts on purpose: the emulated cluster's hosts are namespaces of one machine.)
#pragma once

#include <string>

namespace bsp::transport::shm {

// This process's host key: "<boot id>.<net ns inode>.<pid ns inode>" (hex, no dashes).
std::string host_key();

}  // namespace bsp::transport::shm
