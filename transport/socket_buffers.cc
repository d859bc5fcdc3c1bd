// transport/socket_buffers.cc: see socket_buffers.h.
#include "transport/socket_buffers.h"

#include <sys/socket.h>

namespace bsp::transport {

void size_socket_buffer(int fd, int option, int force_option, int bytes) {
  if (bytes <= 0) return;
  if (::setsockopt(fd, SOL_SOCKET, force_option, &bytes, sizeof bytes) == 0) return;
  ::setsockopt(fd, SOL_SOCKET, option, &bytes, sizeof bytes);
}

}  // namespace bsp::transport
