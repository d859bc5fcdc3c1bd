// transport/socket_buffers.h: sizing a socket's kernel buffers, shared by the transports
// that set them (udp: send and receive; nic: the send budget of its TX ring).
#pragma once

namespace bsp::transport {

// Sets SOL_SOCKET option (SO_SNDBUF or SO_RCVBUF) to bytes: past net.core.{w,r}mem_max
// with force_option (SO_SNDBUFFORCE / SO_RCVBUFFORCE) when privileged, within the limit
// otherwise. bytes <= 0 leaves the kernel's default.
void size_socket_buffer(int fd, int option, int force_option, int bytes);

}  // namespace bsp::transport
