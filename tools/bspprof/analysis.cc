// tools/bspprof/analysis.cc: h-relations, the BSP prediction, call-site resolution and
// the trace-event JSON of a profile (analysis.h).
#include "tools/bspprof/analysis.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bsp::profile {

double predicted_seconds(double w_seconds, double h_bytes, const Model& model) {
  if (!model.known()) return 0;
  return w_seconds + (h_bytes / kWordBytes * model.g_flops_per_word + model.l_flops) / (model.s_mflops * 1e6);
}

Model parse_slg(const std::string& text) {
  Model model;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%lf,%lf,%lf%c", &model.s_mflops, &model.l_flops, &model.g_flops_per_word, &tail) !=
          3 ||
      !(model.s_mflops > 0) || !(model.l_flops >= 0) || !(model.g_flops_per_word >= 0)) {
    throw std::runtime_error(
        fmt::format("--slg={}: expected S,L,G (S in Mflop/s > 0, L in flops >= 0, G in flops per word >= 0)", text));
  }
  return model;
}

namespace {

std::vector<std::string> split(const std::string& line, char by) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, by)) fields.push_back(field);
  return fields;
}

}  // namespace

Model model_from_params_csv(const std::string& path, const std::string& transport, int p, std::string* chosen) {
  std::ifstream in(path);
  Model best;
  int best_distance = -1;
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = split(line, ',');
    if (std::find(fields.begin(), fields.end(), "g_flops_per_word") != fields.end()) {
      header = fields;
      continue;
    }
    if (header.empty() || fields.size() != header.size()) continue;
    auto column = [&](const char* name) -> std::string {
      auto at = std::find(header.begin(), header.end(), name);
      return at == header.end() ? std::string() : fields[static_cast<std::size_t>(at - header.begin())];
    };
    if (column("transport") != transport) continue;
    int row_p = std::atoi(column("p").c_str());
    Model model{std::atof(column("r_mflops").c_str()), std::atof(column("l_flops").c_str()),
                std::atof(column("g_flops_per_word").c_str())};
    if (!model.known()) continue;
    int distance = std::abs(row_p - p);
    if (best_distance < 0 || distance <= best_distance) {  // a later row (a newer run) wins a tie
      best = model;
      best_distance = distance;
      if (chosen) *chosen = fmt::format("{} (transport {}, p = {})", path, transport, row_p);
    }
  }
  return best;
}

Profile analyze(const std::vector<ProcessTrace>& traces, const Model& model) {
  if (traces.empty()) throw TraceError("profile: no process in the trace");
  Profile profile;
  profile.nprocs = traces.front().nprocs;
  profile.transport = traces.front().transport;
  profile.executable = traces.front().executable;
  profile.model = model;
  const auto p = static_cast<std::size_t>(profile.nprocs);
  if (traces.size() != p) {
    throw TraceError(
        fmt::format("profile: {} of {} processes' sections present (a part missing? see bsprun's "
                    "message)",
                    traces.size(), p));
  }
  const std::size_t n = traces.front().steps.size();
  std::uint64_t t0 = UINT64_MAX;
  for (const ProcessTrace& t : traces) {
    if (t.steps.size() != n) {
      throw TraceError(fmt::format("profile: pid {} has {} supersteps, pid 0 has {}", t.pid, t.steps.size(), n));
    }
    t0 = std::min(t0, t.begin_ns);
  }
  auto seconds = [t0](std::uint64_t ns) { return static_cast<double>(ns - t0) * 1e-9; };
  profile.steps.assign(p, std::vector<ProcessStep>(n));
  profile.supersteps.assign(n, SuperstepSummary{});
  for (std::size_t i = 0; i < p; ++i) {
    const ProcessTrace& t = traces[i];
    std::uint64_t previous = t.begin_ns;
    for (std::size_t s = 0; s < n; ++s) {
      const Step& step = t.steps[s];
      ProcessStep& out = profile.steps[i][s];
      std::uint64_t start = std::max(step.sync_start_ns, previous);
      out.begin_s = seconds(previous);
      out.sync_start_s = seconds(start);
      out.end_s = seconds(std::max(step.sync_end_ns, start));
      out.comp_s = out.sync_start_s - out.begin_s;
      out.sync_s = out.end_s - out.sync_start_s;
      out.puts = step.puts;
      out.gets = step.gets;
      out.sends = step.sends;
      out.wire = step.wire;
      out.call_site = step.call_site;
      out.final = step.flags & kFinalStep;
      for (const PeerTraffic& traffic : step.peers) {
        if (traffic.peer == static_cast<std::uint32_t>(i)) continue;  // to itself: not communication
        ProcessStep& peer = profile.steps[traffic.peer][s];
        out.bytes_out += traffic.bytes_out;
        out.messages_out += traffic.messages_out;
        peer.bytes_in += traffic.bytes_out;
        peer.messages_in += traffic.messages_out;
        out.bytes_in += traffic.get_bytes_from;  // a get: the peer sends, this process receives
        out.messages_in += traffic.gets_from;
        peer.bytes_out += traffic.get_bytes_from;
        peer.messages_out += traffic.gets_from;
      }
      previous = std::max(step.sync_end_ns, start);
    }
  }
  for (std::size_t s = 0; s < n; ++s) {
    SuperstepSummary& sum = profile.supersteps[s];
    sum.begin_s = INFINITY;
    for (std::size_t i = 0; i < p; ++i) {
      const ProcessStep& one = profile.steps[i][s];
      sum.begin_s = std::min(sum.begin_s, one.begin_s);
      sum.end_s = std::max(sum.end_s, one.end_s);
      sum.w_s = std::max(sum.w_s, one.comp_s);
      sum.measured_s = std::max(sum.measured_s, one.end_s - one.begin_s);
      sum.h_bytes = std::max({sum.h_bytes, one.bytes_in, one.bytes_out});
      sum.h_messages = std::max({sum.h_messages, one.messages_in, one.messages_out});
    }
    sum.predicted_s = predicted_seconds(sum.w_s, static_cast<double>(sum.h_bytes), model);
  }
  return profile;
}

namespace {

// The program headers' PT_LOAD segments of an ELF64 little-endian file (untrusted: every
// offset checked); empty when the file cannot be read or is not such a file.
struct Segment {
  std::uint64_t offset, vaddr, filesz;
};
std::vector<Segment> load_segments(const std::string& path) {
  std::vector<Segment> segments;
  std::ifstream in(path, std::ios::binary);
  unsigned char ehdr[64];
  if (!in.read(reinterpret_cast<char*>(ehdr), sizeof ehdr)) return segments;
  if (std::memcmp(ehdr,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      ehdr[4] != 2 || ehdr[5] != 1)
    return segments;
  auto u16 = [](const unsigned char* b) { return static_cast<std::uint64_t>(b[0] | b[1] << 8); };
  auto u32 = [](const unsigned char* b) {
    return static_cast<std::uint64_t>(b[0]) | static_cast<std::uint64_t>(b[1]) << 8 |
           static_cast<std::uint64_t>(b[2]) << 16 | static_cast<std::uint64_t>(b[3]) << 24;
  };
  auto u64 = [&](const unsigned char* b) { return u32(b) | u32(b + 4) << 32; };
  std::uint64_t phoff = u64(ehdr + 32), phentsize = u16(ehdr + 54), phnum = u16(ehdr + 56);
  if (phentsize < 56 || phnum > 4096) return segments;
  for (std::uint64_t k = 0; k < phnum; ++k) {
    unsigned char ph[56];
    in.seekg(static_cast<std::streamoff>(phoff + k * phentsize));
    if (!in.read(reinterpret_cast<char*>(ph), sizeof ph)) break;
    if (u32(ph) != 1) continue;  // PT_LOAD
    segments.push_back(Segment{u64(ph + 8), u64(ph + 16), u64(ph + 32)});
  }
  return segments;
}

}  // namespace

Site locate(const ProcessTrace& trace, std::uint64_t return_address) {
  static std::map<std::string, std::vector<Segment>> cache;
  Site site;
  std::uint64_t address = return_address ? return_address - 1 : 0;
  for (const Mapping& m : trace.mappings) {
    if (address < m.start || address >= m.end) continue;
    site.module = m.path;
    std::uint64_t file_offset = address - m.start + m.offset;
    auto [it, fresh] = cache.try_emplace(m.path);
    if (fresh) it->second = load_segments(m.path);
    site.vaddr = file_offset;  // without program headers: the offset (right for most PIEs)
    for (const Segment& seg : it->second) {
      if (file_offset >= seg.offset && file_offset < seg.offset + seg.filesz) {
        site.vaddr = seg.vaddr + (file_offset - seg.offset);
        break;
      }
    }
    return site;
  }
  site.module.assign(1, '?');  // not `= "?"`: GCC 12 warns falsely there (-Wrestrict, its bug 105651)
  site.vaddr = address;
  return site;
}

void resolve(std::vector<Site*>& sites) {
  std::map<std::string, std::vector<Site*>> by_module;
  for (Site* site : sites) {
    if (site->module != "?") by_module[site->module].push_back(site);
  }
  for (auto& [module, group] : by_module) {
    if (::access(module.c_str(), R_OK) != 0) continue;
    // addr2line reads addresses from a file: no command line to quote, no length limit.
    char input[] = "/tmp/bspprof.XXXXXX";
    int fd = ::mkstemp(input);
    if (fd < 0) continue;
    std::string addresses;
    for (Site* site : group) addresses += fmt::format("{:#x}\n", site->vaddr);
    if (::write(fd, addresses.data(), addresses.size()) != static_cast<ssize_t>(addresses.size())) {
      ::close(fd);
      ::unlink(input);
      continue;
    }
    ::close(fd);
    std::string quoted = "'";
    for (char c : module) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    std::string command = fmt::format("addr2line -f -C -e {} < {} 2>/dev/null", quoted, input);
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char line[8192];
      for (Site* site : group) {
        if (!std::fgets(line, sizeof line, pipe)) break;
        site->function = std::string(line, strcspn(line, "\n"));
        if (!std::fgets(line, sizeof line, pipe)) break;
        site->location = std::string(line, strcspn(line, "\n"));
        if (auto space = site->location.find(" (discriminator"); space != std::string::npos) {
          site->location.resize(space);
        }
      }
      ::pclose(pipe);
    }
    ::unlink(input);
  }
}

SiteMap locate_all(const Profile& profile, const std::vector<ProcessTrace>& traces) {
  SiteMap located;
  for (std::size_t i = 0; i < profile.steps.size(); ++i) {
    for (const ProcessStep& one : profile.steps[i]) {
      auto key = std::make_pair(static_cast<int>(i), one.call_site);
      if (!located.count(key)) located.emplace(key, locate(traces[i], one.call_site));
    }
  }
  std::vector<Site*> sites;
  for (auto& [key, site] : located) sites.push_back(&site);
  resolve(sites);
  return located;
}

std::vector<SiteCost> site_costs(const Profile& profile, const SiteMap& located) {
  std::map<Site, SiteCost> costs;
  for (std::size_t i = 0; i < profile.steps.size(); ++i) {
    for (std::size_t s = 0; s < profile.steps[i].size(); ++s) {
      const ProcessStep& one = profile.steps[i][s];
      auto found = located.find({static_cast<int>(i), one.call_site});
      Site site = found != located.end() ? found->second : Site{"?", one.call_site};
      SiteCost& cost = costs[site];
      cost.site = site;
      ++cost.calls;
      cost.comp_s += one.comp_s;
      cost.sync_s += one.sync_s;
      cost.predicted_s += profile.supersteps[s].predicted_s;
      cost.h_bytes += std::max(one.bytes_in, one.bytes_out);
    }
  }
  std::vector<SiteCost> out;
  for (auto& [site, cost] : costs) out.push_back(cost);
  std::sort(out.begin(), out.end(),
            [](const SiteCost& a, const SiteCost& b) { return a.comp_s + a.sync_s > b.comp_s + b.sync_s; });
  return out;
}

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::string trace_event_json(const Profile& profile,
                             const std::map<std::pair<int, std::uint64_t>, std::string>& site_names) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{";
  out += fmt::format("\"transport\":{},\"executable\":{},\"nprocs\":{}}},\"traceEvents\":[\n",
                     json_string(profile.transport), json_string(profile.executable), profile.nprocs);
  bool first = true;
  for (int i = 0; i < profile.nprocs; ++i) {
    out += fmt::format(
        "{}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"bsp pid "
        "{}\"}}}}",
        first ? "" : ",\n", i, i);
    first = false;
  }
  for (int i = 0; i < profile.nprocs; ++i) {
    const auto& steps = profile.steps[static_cast<std::size_t>(i)];
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const ProcessStep& one = steps[s];
      auto name = site_names.find({i, one.call_site});
      out += fmt::format(
          ",\n{{\"name\":\"superstep {}\",\"cat\":\"superstep\",\"ph\":\"X\",\"pid\":{},\"tid\":0,\"ts\":{:.3f},"
          "\"dur\":{:.3f},\"args\":{{\"computation_us\":{:.3f},\"sync_us\":{:.3f},\"bytes_out\":{},\"bytes_in\":{},"
          "\"messages_out\":{},\"messages_in\":{},\"puts\":{},\"gets\":{},\"sends\":{},\"frames_sent\":{},"
          "\"frames_received\":{},\"retransmissions\":{},\"acks_sent\":{},\"call_site\":{}}}}}",
          s, i, one.begin_s * 1e6, (one.end_s - one.begin_s) * 1e6, one.comp_s * 1e6, one.sync_s * 1e6, one.bytes_out,
          one.bytes_in, one.messages_out, one.messages_in, one.puts, one.gets, one.sends, one.wire.frames_sent,
          one.wire.frames_received, one.wire.retransmissions, one.wire.acks_sent,
          json_string(name != site_names.end() ? name->second : fmt::format("{:#x}", one.call_site)));
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace bsp::profile
