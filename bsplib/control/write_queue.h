// bsplib/control/write_queue.h: messages to one peer written in order, asynchronously
// (Boost.Asio), so a peer that does not read never stalls the event loop. Used by the
// coordinator for its sessions and by bsprun for its remote shells.
#pragma once

#include <boost/asio.hpp>
#include <deque>
#include <memory>
#include <string>

namespace bsp::control {

template <typename Stream>
class WriteQueue {
 public:
  // Queues bytes for stream. owner (which holds this queue and the stream) is kept alive
  // until the write ends. After a write error the rest is dropped.
  template <typename Owner>
  void send(Stream& stream, std::string bytes, std::shared_ptr<Owner> owner) {
    if (!stream.is_open()) return;
    outbox_.push_back(std::move(bytes));
    if (!writing_) write_next(stream, std::move(owner));
  }

 private:
  template <typename Owner>
  void write_next(Stream& stream, std::shared_ptr<Owner> owner) {
    if (outbox_.empty() || !stream.is_open()) {
      writing_ = false;
      return;
    }
    writing_ = true;
    boost::asio::async_write(stream, boost::asio::buffer(outbox_.front()),
                             [this, &stream, owner](boost::system::error_code ec, std::size_t) {
                               outbox_.pop_front();
                               if (ec) {
                                 outbox_.clear();
                                 writing_ = false;
                                 return;
                               }
                               write_next(stream, owner);
                             });
  }

  std::deque<std::string> outbox_;
  bool writing_ = false;
};

}  // namespace bsp::control
