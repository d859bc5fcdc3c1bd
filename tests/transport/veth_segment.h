// tests/transport/veth_segment.h: an Ethernet segment of its own for in-process transport
// tests that need one interface per process (xdp: one AF_XDP socket and one XDP program
// per interface): a new network namespace holding a bridge and N veth pairs, one end of
// each on the bridge, the other (x0 .. xN-1) for a process. The namespace belongs to
// this test process alone: it and everything in it vanish when the process ends, however
// it ends, and the machine's own namespace is never touched. Threads enter it with
// Entered; threads they start are in it too.
#pragma once

#include <memory>
#include <string>

namespace bsp::transport::testing {

class VethSegment {
 public:
  // The segment with `ports` interfaces, made once per test process (more ports than the
  // first caller asked for are never added); nullptr, with why() saying why, when it
  // cannot be made (no root, no namespaces, no veth or bridge driver, no `ip`).
  static VethSegment* get(int ports);
  static const std::string& why();

  std::string interface(int port) const { return "x" + std::to_string(port); }
  int ports() const { return ports_; }

  // Puts the calling thread into the segment's namespace until destroyed.
  class Entered {
   public:
    explicit Entered(const VethSegment& segment);
    ~Entered();
    Entered(const Entered&) = delete;
    Entered& operator=(const Entered&) = delete;

   private:
    int home_ = -1;
  };

 private:
  VethSegment(int ports, int namespace_fd) : ports_(ports), namespace_fd_(namespace_fd) {}
  int ports_;
  int namespace_fd_;
};

}  // namespace bsp::transport::testing
