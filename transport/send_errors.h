// transport/send_errors.h: what a failed send means. Transient errors (no buffer, a
// route or peer briefly unreachable) are back-pressure or a lost datagram the reliable
// layer resends; permanent ones (the interface went down, the frame can never fit, no
// permission) mean the peer cannot be reached: the transport reports it as lost, with
// the errno's text, instead of retrying forever or dropping frames in silence.
#pragma once

#include <cerrno>

namespace bsp::transport {

inline bool permanent_send_error(int error) {
  switch (error) {
    case ENETDOWN:
    case ENODEV:
    case ENXIO:
    case EPERM:
    case EACCES:
    case EMSGSIZE:
    case EBADF:
    case EINVAL:
    case ENOTSOCK:
    case EFAULT:
    case EDESTADDRREQ:
    case EAFNOSUPPORT:
      return true;
    default:  // EAGAIN, ENOBUFS, ENOMEM, EINTR, EHOSTUNREACH, ENETUNREACH, ECONNREFUSED, ...
      return false;
  }
}

}  // namespace bsp::transport
