// transport/xdp/xdp_steer_object.h: the compiled XDP program (xdp_steer.bpf.c), embedded
// in the binary by a genrule (transport/BUILD), so nothing is looked up at run time.
#pragma once

#include <cstddef>

namespace bsp::transport::xdp {

extern const unsigned char kSteerObject[];
extern const std::size_t kSteerObjectSize;

}  // namespace bsp::transport::xdp
