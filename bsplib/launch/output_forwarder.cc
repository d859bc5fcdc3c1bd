// bsplib/launch/output_forwarder.cc: the processes' output on bsprun's terminal.
#include "bsplib/launch/output_forwarder.h"

#include <errno.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <string>

namespace bsp::launch {

void OutputForwarder::write_fully(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return;  // the terminal is gone: nothing more to do with the output
    }
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
}

void OutputForwarder::write(int pid, int stream, std::string_view bytes) {
  int fd = stream == 2 ? STDERR_FILENO : STDOUT_FILENO;
  std::string& partial = partial_lines_[{pid, stream}];
  std::string lines;
  const std::string prefix = tag_output_ ? "[" + std::to_string(pid) + "] " : std::string();
  while (!bytes.empty()) {
    auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      partial.append(bytes);
      break;
    }
    lines += prefix;
    lines += partial;
    lines.append(bytes.substr(0, newline + 1));
    partial.clear();
    bytes.remove_prefix(newline + 1);
  }
  // A line without end (a progress bar, binary output) goes out once it is this long, so
  // memory stays bounded; only such lines can still be cut.
  if (partial.size() >= kLongestLine) {
    lines += prefix;
    lines += partial;
    if (tag_output_) lines += '\n';
    partial.clear();
  }
  write_fully(fd, lines);
}

void OutputForwarder::flush(int pid) {
  for (int stream : {1, 2}) {
    auto found = partial_lines_.find({pid, stream});
    if (found == partial_lines_.end() || found->second.empty()) continue;
    // Tagged, the last piece becomes a line of its own; untagged, the bytes go out as written.
    write_fully(stream == 2 ? STDERR_FILENO : STDOUT_FILENO,
                tag_output_ ? "[" + std::to_string(pid) + "] " + found->second + "\n" : found->second);
    found->second.clear();
  }
}

void OutputForwarder::flush_all() {
  for (auto& [key, partial] : partial_lines_) {
    if (!partial.empty()) flush(key.first);
  }
}

namespace {

struct PipeReader : std::enable_shared_from_this<PipeReader> {
  PipeReader(boost::asio::io_context& io, int fd, int pid_, int stream_, OutputForwarder& output_)
      : pipe(io, fd), pid(pid_), stream(stream_), output(output_) {}
  void read() {
    pipe.async_read_some(boost::asio::buffer(buffer),
                         [self = shared_from_this()](boost::system::error_code ec, std::size_t got) {
                           if (ec) return self->output.flush(self->pid);
                           self->output.write(self->pid, self->stream, std::string_view(self->buffer.data(), got));
                           self->read();
                         });
  }
  boost::asio::posix::stream_descriptor pipe;
  int pid, stream;
  OutputForwarder& output;
  std::array<char, 16384> buffer;
};

}  // namespace

void forward_pipe(boost::asio::io_context& io, int fd, int pid, int stream, OutputForwarder& output) {
  std::make_shared<PipeReader>(io, fd, pid, stream, output)->read();
}

}  // namespace bsp::launch
