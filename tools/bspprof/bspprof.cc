// tools/bspprof/bspprof.cc: draws a superstep profile (bsprun --profile=FILE), like the
// Oxford toolset's bspprof and bspcgprof: strata graphs of bytes and messages in and out
// of every process over time, the BSP prediction w + h·g + l against the measured time of
// every superstep, g over time, the costliest call sites, and Chrome/Perfetto trace-event
// JSON. Graphs are made by gnuplot (PNG and SVG).
//
//   bspprof FILE [--out=DIR] [--slg=S,L,G | --params=CSV] [--top=N] [--no-plots]
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bsplib/profile/trace_format.h"
#include "tools/bspprof/analysis.h"

using namespace bsp::profile;

namespace {

constexpr const char* kUsage =
    "usage: bspprof FILE [--out=DIR] [--slg=S,L,G | --params=CSV] [--top=N] [--no-plots]\n"
    "  FILE          a profile written by bsprun --profile=FILE (or bspcc -prof)\n"
    "  --out=DIR     where the graphs, tables and trace.json go (default FILE.report)\n"
    "  --slg=S,L,G   the machine for the prediction: S Mflop/s, L flops, G flops per 8-byte word\n"
    "  --params=CSV  take S, L, G from bench/bsp_params output for the profile's transport and p\n"
    "                (default results/bench/params.csv, then results/profiles/params.csv)\n"
    "  --top=N       call sites in the table (default 15)\n"
    "  --no-plots    tables and JSON only\n";

// The report's directory: made now, mode 0700, or one already there that is this user's,
// no link, and writable by nobody else, so no file in it can be a link someone planted
// (the report is rewritten in place, as gnuplot writes its graphs). "" or the problem.
std::string private_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return {};
  if (errno != EEXIST) return fmt::format("cannot make the directory {}: {}", dir, std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fmt::format("{} exists and is not a directory (a link is not followed); choose another with --out=DIR", dir);
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    return fmt::format("{} is {}: others could plant links in it; choose another with --out=DIR", dir,
                       st.st_uid != ::geteuid() ? fmt::format("user id {}'s", st.st_uid) : "writable by others");
  }
  return {};
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::string g_observed(const SuperstepSummary& s, const Model& model) {
  double words = static_cast<double>(s.h_bytes) / kWordBytes;
  if (s.h_bytes < 64) return "NaN";  // too little traffic for g to mean anything
  double l = model.known() ? model.l_seconds() : 0;
  return fmt::format("{:.6f}", (s.measured_s - s.w_s - l) / words * 1e6);
}

std::string site_name(const Site& site) {
  std::string location = site.location;
  if (location.rfind("??", 0) == 0)
    location = fmt::format("{}+{:#x}", site.module.substr(site.module.rfind('/') + 1), site.vaddr);
  return fmt::format("{} {}", site.function, location);
}

std::uint64_t max_h_bytes(const std::vector<SuperstepSummary>& sums) {
  std::uint64_t h = 0;
  for (const SuperstepSummary& s : sums) h = std::max(h, s.h_bytes);
  return h;
}

// Why g over time has no point: the label of the empty graph.
std::string empty_g_reason(std::size_t supersteps, std::uint64_t max_h) {
  if (supersteps == 0) return "no superstep in this profile: nothing to plot";
  return fmt::format(
      "no superstep had h >= 8 words (64 bytes), too little traffic for g to mean anything; "
      "the largest h was {} bytes",
      max_h);
}

// One graph in both formats.
std::string both_formats(const std::string& name, const std::string& body, const char* size = "1200,800") {
  return fmt::format(
      "set terminal pngcairo size {} noenhanced font ',10'\nset output '{}.png'\n{}\n"
      "set terminal svg size {} dynamic noenhanced font ',10'\nset output '{}.svg'\nreplot\nunset multiplot\n",
      size, name, body, size, name);
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, out_dir, slg, params;
  int top = 15;
  bool plots = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&arg](const char* prefix) { return arg.substr(std::strlen(prefix)); };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg.rfind("--out=", 0) == 0) {
      out_dir = value("--out=");
    } else if (arg.rfind("--slg=", 0) == 0) {
      slg = value("--slg=");
    } else if (arg.rfind("--params=", 0) == 0) {
      params = value("--params=");
    } else if (arg.rfind("--top=", 0) == 0) {
      top = std::atoi(value("--top=").c_str());
    } else if (arg == "--no-plots") {
      plots = false;
    } else if (!arg.empty() && arg[0] != '-' && file.empty()) {
      file = arg;
    } else {
      std::fprintf(stderr, "bspprof: unknown argument %s\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  if (file.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (out_dir.empty()) out_dir = file + ".report";
  try {
    std::vector<ProcessTrace> traces = read_trace_file(file);
    Model model;
    std::string model_from;
    const int p = traces.front().nprocs;
    const std::string transport = traces.front().transport;
    if (!slg.empty()) {
      model = parse_slg(slg);
      model_from = "--slg=" + slg;
    } else {
      std::vector<std::string> candidates;
      if (!params.empty()) {
        candidates.push_back(params);
      } else {
        candidates = {"results/bench/params.csv", "results/profiles/params.csv"};
      }
      for (const std::string& csv : candidates) {
        if (model.known()) break;
        model = model_from_params_csv(csv, transport, p, &model_from);
      }
      if (!params.empty() && !model.known()) {
        throw std::runtime_error(fmt::format("--params={}: no row for transport {}", params, transport));
      }
    }
    Profile profile = analyze(traces, model);
    SiteMap located = locate_all(profile, traces);
    std::vector<SiteCost> costs = site_costs(profile, located);
    if (std::string problem = private_directory(out_dir); !problem.empty()) throw std::runtime_error(problem);
    const auto& sums = profile.supersteps;
    const std::size_t n = sums.size();

    // Tables.
    std::string supersteps = "superstep,begin_s,end_s,w_s,measured_s,predicted_s,h_bytes,h_messages,g_us_per_word\n";
    for (std::size_t s = 0; s < n; ++s) {
      const SuperstepSummary& x = sums[s];
      supersteps += fmt::format("{},{:.9f},{:.9f},{:.9f},{:.9f},{},{},{},{}\n", s, x.begin_s, x.end_s, x.w_s,
                                x.measured_s, model.known() ? fmt::format("{:.9f}", x.predicted_s) : "NaN", x.h_bytes,
                                x.h_messages, g_observed(x, model));
    }
    std::string processes =
        "pid,superstep,begin_s,computation_s,sync_s,bytes_out,bytes_in,messages_out,messages_in,puts,gets,sends,"
        "wire_bytes_sent,wire_bytes_received,frames_sent,frames_received,retransmissions,acks_sent,acks_received,"
        "call_site\n";
    for (int i = 0; i < p; ++i) {
      for (std::size_t s = 0; s < n; ++s) {
        const ProcessStep& x = profile.steps[static_cast<std::size_t>(i)][s];
        auto site = located.find({i, x.call_site});
        processes += fmt::format("{},{},{:.9f},{:.9f},{:.9f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\"\n", i, s,
                                 x.begin_s, x.comp_s, x.sync_s, x.bytes_out, x.bytes_in, x.messages_out, x.messages_in,
                                 x.puts, x.gets, x.sends, x.wire.bytes_sent, x.wire.bytes_received, x.wire.frames_sent,
                                 x.wire.frames_received, x.wire.retransmissions, x.wire.acks_sent, x.wire.acks_received,
                                 site == located.end() ? std::string("?") : site_name(site->second));
      }
    }
    double total = 0;
    for (const SiteCost& c : costs) total += c.comp_s + c.sync_s;
    std::string table = fmt::format(
        "Costliest call sites of {} ({} processes, {}, {} supersteps); times summed over processes\n\n"
        "| call site | function | supersteps | computation s | sync s | share | predicted s | mean h bytes |\n"
        "|---|---|---|---|---|---|---|---|\n",
        profile.executable, p, transport, n);
    std::string sites_csv = "location,function,process_supersteps,computation_s,sync_s,predicted_s,h_bytes\n";
    for (std::size_t k = 0; k < costs.size(); ++k) {
      const SiteCost& c = costs[k];
      std::string location = site_name(c.site).substr(c.site.function.size() + 1);
      if (static_cast<int>(k) < top) {
        table += fmt::format("| {} | {} | {} | {:.4f} | {:.4f} | {:.1f}% | {} | {:.0f} |\n", location, c.site.function,
                             c.calls, c.comp_s, c.sync_s, total > 0 ? 100 * (c.comp_s + c.sync_s) / total : 0.0,
                             model.known() ? fmt::format("{:.4f}", c.predicted_s) : "-",
                             static_cast<double>(c.h_bytes) / static_cast<double>(c.calls));
      }
      sites_csv += fmt::format("\"{}\",\"{}\",{},{:.9f},{:.9f},{:.9f},{}\n", location, c.site.function, c.calls,
                               c.comp_s, c.sync_s, c.predicted_s, c.h_bytes);
    }
    std::map<std::pair<int, std::uint64_t>, std::string> names;
    for (const auto& [key, site] : located) names[key] = site_name(site);

    if (!write_file(out_dir + "/supersteps.csv", supersteps) || !write_file(out_dir + "/processes.csv", processes) ||
        !write_file(out_dir + "/callsites.md", table) || !write_file(out_dir + "/callsites.csv", sites_csv) ||
        !write_file(out_dir + "/trace.json", trace_event_json(profile, names))) {
      throw std::runtime_error(fmt::format("cannot write into {}", out_dir));
    }

    // Summary on stdout.
    double comp = 0, sync = 0;
    std::uint64_t frames = 0, retransmissions = 0, acks = 0;
    for (const auto& steps : profile.steps) {
      for (const ProcessStep& x : steps) {
        comp += x.comp_s;
        sync += x.sync_s;
        frames += x.wire.frames_sent;
        retransmissions += x.wire.retransmissions;
        acks += x.wire.acks_sent;
      }
    }
    std::printf("%s: %s, %d processes over %s, %zu supersteps, %.3f s\n", file.c_str(), profile.executable.c_str(), p,
                transport.c_str(), n, n ? sums.back().end_s : 0.0);
    std::printf(
        "computation %.3f s, sync %.3f s (summed over processes); frames sent %llu, retransmissions %llu, "
        "explicit acks %llu\n",
        comp, sync, static_cast<unsigned long long>(frames), static_cast<unsigned long long>(retransmissions),
        static_cast<unsigned long long>(acks));
    if (model.known()) {
      std::printf("model: S = %.1f Mflop/s, L = %.0f flops (%.2f us), G = %.1f flops/word (%.4f us/word), from %s\n",
                  model.s_mflops, model.l_flops, model.l_seconds() * 1e6, model.g_flops_per_word,
                  model.g_seconds_per_word() * 1e6, model_from.c_str());
    } else {
      std::printf(
          "model: none for transport %s (give --slg=S,L,G or --params=CSV from bench/bsp_params); no "
          "prediction graph\n",
          transport.c_str());
    }
    std::fputs(("\n" + table + "\n").c_str(), stdout);

    if (plots) {
      // Strata: cumulative per process, so each process is a band; a superstep holds its
      // value from its begin to the next one's.
      std::string strata;
      auto row = [&](double x, std::size_t s) {
        strata += fmt::format("{:.9f}", x);
        for (int q = 0; q < 4; ++q) {
          std::uint64_t sum = 0;
          for (int i = 0; i < p; ++i) {
            const ProcessStep& y = profile.steps[static_cast<std::size_t>(i)][s];
            sum += q == 0 ? y.bytes_out : q == 1 ? y.bytes_in : q == 2 ? y.messages_out : y.messages_in;
            strata += fmt::format(" {}", sum);
          }
        }
        strata += "\n";
      };
      for (std::size_t s = 0; s < n; ++s) row(sums[s].begin_s, s);
      if (n) row(sums.back().end_s, n - 1);
      write_file(out_dir + "/strata.dat", strata);
      std::string title = fmt::format("{} — p = {}, {}", profile.executable.substr(profile.executable.rfind('/') + 1),
                                      p, transport);
      auto strata_plot = [&](int first_q, const char* unit) {
        std::string body = fmt::format(
            "set multiplot layout 2,1 title '{} ({})'\nset style fill solid 0.85 noborder\n"
            "set key outside right\nset xlabel 'time (s)'\nset ylabel '{}'\n",
            title, unit, unit);
        for (int q = first_q; q < first_q + 2; ++q) {
          body += fmt::format("set title '{} {}, stacked by process'\n", unit, q % 2 == 0 ? "out" : "in");
          body += fmt::format(
              "plot for [k={}:1:-1] 'strata.dat' using 1:(column({}+k)) with fillsteps "
              "title sprintf('pid %d', k-1)\n",
              p, 1 + q * p);
        }
        body += "unset multiplot\n";
        // replot does not repeat a multiplot: write the body again for the second format.
        return body;
      };
      std::string script = "set datafile separator whitespace\n";
      for (auto [name, q, unit] :
           {std::tuple{"strata_bytes", 0, "bytes"}, std::tuple{"strata_messages", 2, "messages"}}) {
        std::string body = strata_plot(q, unit);
        script += fmt::format(
            "set terminal pngcairo size 1200,900 noenhanced font ',10'\nset output '{}.png'\n{}"
            "set terminal svg size 1200,900 dynamic noenhanced font ',10'\nset output '{}.svg'\n{}reset\n",
            name, body, name, body);
      }
      script += "set datafile separator ','\n";
      if (model.known()) {
        script += both_formats(
            "prediction",
            fmt::format("set title \"{}: measured time of each superstep against w + h·g + l\\n(S = {:.0f} Mflop/s, "
                        "L = {:.0f} flops, G = {:.1f} flops/word, {})\"\n"
                        "set logscale y\nset xlabel 'superstep'\nset ylabel 'seconds'\nset key top left\n"
                        "plot 'supersteps.csv' every ::1 using 1:6 with points pt 2 ps 0.6 lc rgb '#1f77b4' "
                        "title 'predicted w + h g + l', "
                        "'' every ::1 using 1:5 with points pt 7 ps 0.4 lc rgb '#2ca02c' title 'measured', "
                        "'' every ::1 using 1:(($5 > 2*$6 || $5 < 0.5*$6) ? $5 : NaN) with points pt 6 ps 1.2 "
                        "lc rgb '#d62728' title 'model off by more than 2x'",
                        title, model.s_mflops, model.l_flops, model.g_flops_per_word, model_from));
      }
      // gnuplot stops ("all points y value undefined") on a plot without one point: a
      // profile without a superstep of h >= 8 words (a ring of 4-byte puts) gets an empty
      // graph that says why it is empty.
      std::size_t g_points = 0;
      for (std::size_t s = 0; s < n; ++s) g_points += g_observed(sums[s], model) != "NaN" ? 1 : 0;
      std::string g_plot =
          g_points > 0
              ? fmt::format(
                    "plot 'supersteps.csv' every ::1 using 2:9 with points pt 7 ps 0.5 lc rgb '#9467bd' "
                    "title 'g observed (h >= 8 words)'{}",
                    model.known() ? fmt::format(", {:.6f} with lines lw 2 lc rgb '#ff7f0e' title 'g of the model'",
                                                model.g_seconds_per_word() * 1e6)
                                  : std::string())
              : fmt::format(
                    "unset logscale\nset label 1 \"{}\" at graph 0.5, 0.5 center\n"
                    "plot [0:{:.9f}] [0:1] -1 notitle",
                    empty_g_reason(n, sums.empty() ? 0 : max_h_bytes(sums)),
                    n ? std::max(sums.back().end_s, 1e-6) : 1.0);
      script += both_formats(
          "g_over_time",
          fmt::format("set title \"{}: g observed per superstep, (measured - w - l) / h\"\n"
                      "set xlabel 'time (s)'\nset ylabel 'microseconds per 8-byte word'\nset key top right\n{}",
                      title, g_plot));
      write_file(out_dir + "/plots.gp", script);
      std::string command = fmt::format("cd '{}' && gnuplot plots.gp 2> gnuplot.log", out_dir);
      if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "bspprof: gnuplot failed (see %s/gnuplot.log)\n", out_dir.c_str());
        return 1;
      }
    }
    std::printf(
        "wrote %s/: strata_bytes, strata_messages, %sg_over_time (.png, .svg), supersteps.csv, "
        "processes.csv, callsites.md, callsites.csv, trace.json (chrome://tracing, ui.perfetto.dev)\n",
        out_dir.c_str(), model.known() ? "prediction, " : "");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bspprof: %s\n", error.what());
    return 1;
  }
  return 0;
}
