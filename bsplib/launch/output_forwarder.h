// bsplib/launch/output_forwarder.h: writes the processes' standard output and error to
// bsprun's own, whole lines at a time (so lines of different processes never interleave
// mid-line), prefixed "[pid] " with --tag-output. A line longer than kLongestLine goes out
// in pieces of that size; a process's last unfinished line goes out when its pipe ends.
#pragma once

#include <boost/asio.hpp>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace bsp::launch {

class OutputForwarder {
 public:
  explicit OutputForwarder(bool tag_output) : tag_output_(tag_output) {}
  ~OutputForwarder() { flush_all(); }

  // stream: 1 stdout, 2 stderr.
  void write(int pid, int stream, std::string_view bytes);
  // Writes what is left of pid's unfinished lines (the process ended).
  void flush(int pid);
  void flush_all();

 private:
  static constexpr std::size_t kLongestLine = 64 * 1024;
  static void write_fully(int fd, std::string_view bytes);
  bool tag_output_;
  std::map<std::pair<int, int>, std::string> partial_lines_;
};

// Reads pipe `fd` (a local process's stdout or stderr) on io until it ends, handing what
// comes to output; takes the descriptor.
void forward_pipe(boost::asio::io_context& io, int fd, int pid, int stream, OutputForwarder& output);

}  // namespace bsp::launch
