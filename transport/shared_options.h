// transport/shared_options.h: the settings more than one transport reads, each defined
// once here (its name, default as shown, help and limits); the transports that read one
// list it with their factory (registry.h), beside the options only they read.
#pragma once

#include "transport/option_spec.h"

namespace bsp::transport::shared_options {

const TransportOption& rcvbuf();              // tcp, udp
const TransportOption& sndbuf();              // tcp, udp, nic
const TransportOption& mtu();                 // udp, nic, xdp
const TransportOption& iface();               // nic, xdp
const TransportOption& host();                // tcp, udp, nic, xdp
const TransportOption& connect_timeout_ms();  // tcp, nic, xdp

}  // namespace bsp::transport::shared_options
