// SPDX-License-Identifier: MIT
// `gpurent oom [FILE|-] [--card C]`: explains the last CUDA out-of-memory error in a log.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/services.hpp"
#include "common/rounding.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "sizing/oom_diagnose.hpp"
#include "sizing/oom_parse.hpp"

namespace gpurent {
namespace {

// 64 KiB reads: the log streams, never loaded whole. The buffer is left uninitialised so that a
// short log touches only the pages it fills (a zeroed 1 MiB cost 256 page faults per start).
constexpr std::size_t k_read_chunk = 64 * 1024;

struct OomOptions {
  std::string file = "-";
  std::string card;
};

// JSON sizes: GiB rounded to 6 decimals (1 byte ~ 1e-9 GiB, the message itself has 2 decimals).
double gib6(Bytes b) { return round_to_places(to_gib(b), 6); }
std::string gib(Bytes b) { return fmt::format("{:.2f} GiB", to_gib(b)); }

Result<OomReport> scan_stream(std::istream& in, OomScanner& scanner, const std::string& name)
{
  const auto buffer = std::make_unique_for_overwrite<char[]>(k_read_chunk);
  while (in) {
    in.read(buffer.get(), static_cast<std::streamsize>(k_read_chunk));
    const auto got = in.gcount();
    if (got > 0) {
      scanner.feed(std::string_view(buffer.get(), static_cast<std::size_t>(got)));
    }
  }
  if (in.bad()) {
    return fail(Errc::invalid_input, fmt::format("oom: reading {} failed after {} bytes; check the file", name, scanner.bytes_seen()));
  }
  return scanner.finish();
}

Result<OomReport> read_report(Services& s, const OomOptions& o)
{
  OomScanner scanner;
  if (o.file.empty() || o.file == "-") {
    if (s.stdin_tty) {
      s.err << "gpurent oom: reading the error from stdin; paste it, then press Ctrl-D\n";
    }
    return scan_stream(s.in, scanner, "stdin");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(o.file, ec)) {
    return fail(Errc::invalid_input, fmt::format("oom: '{}' is a directory; give the log file that holds the error", o.file));
  }
  std::ifstream file(o.file, std::ios::binary);
  if (!file) {
    return fail(Errc::not_found, fmt::format("oom: cannot open '{}': {}; check the path, or pipe the log with `gpurent oom -`",
                                             o.file, std::strerror(errno)));
  }
  return scan_stream(file, scanner, "'" + o.file + "'");
}

// Every card of the catalogue with each built-in offer of it (or alone, when nobody offers it).
std::vector<OomCardOption> card_options()
{
  std::vector<OomCardOption> out;
  const auto offers = builtin_offers();
  for (const auto& card : card_catalog()) {
    bool offered = false;
    for (const auto& offer : offers) {
      if (offer.card == card.id) {
        out.push_back({card.id, card.display, card.usable, offer.provider, offer.gpus, offer.price_per_hour});
        offered = true;
      }
    }
    if (!offered) {
      out.push_back({card.id, card.display, card.usable, {}, 1, std::nullopt});
    }
  }
  return out;
}

void put(nlohmann::json& j, const char* key, const std::optional<Bytes>& b)
{
  if (b) {
    j[key] = gib6(*b);
  }
}

nlohmann::json to_json(const OomReport& r, const OomDiagnosis& d)
{
  nlohmann::json j;
  j["engine"] = to_string(r.engine);
  if (r.format != OomFormat::unknown) {
    j["format"] = to_string(r.format);
  }
  if (r.device) {
    j["device"] = *r.device;
  }
  put(j, "requested_gib", r.requested);
  put(j, "total_gib", r.total);
  put(j, "free_gib", r.free);
  put(j, "process_in_use_gib", r.process_in_use);
  put(j, "allocated_gib", r.allocated);
  put(j, "reserved_unallocated_gib", r.reserved_unallocated);
  put(j, "other_processes_gib", d.other_processes);
  if (r.max_model_len) {
    j["max_model_len"] = *r.max_model_len;
  }
  if (r.kv_cache_tokens) {
    j["kv_cache_tokens"] = *r.kv_cache_tokens;
  }
  put(j, "need_gib", d.need);
  j["causes"] = nlohmann::json::array();
  for (const auto c : d.causes) {
    j["causes"].push_back(to_string(c));
  }
  j["fixes"] = nlohmann::json::array();
  for (const auto& f : d.fixes) {
    nlohmann::json fix{{"id", f.id}, {"description", f.description}};
    if (!f.command.empty()) {
      fix["command"] = f.command;
    }
    j["fixes"].push_back(std::move(fix));
  }
  if (d.card) {
    nlohmann::json card{{"card", d.card->card}, {"vram_gib", round2(to_gib(d.card->usable))}, {"gpus", d.card->gpus}};
    if (!d.card->provider.empty()) {
      card["provider"] = d.card->provider;
    }
    if (d.card->price_per_hour) {
      card["price_per_hour"] = to_units(*d.card->price_per_hour, 6);
      card["currency"] = "USD";
    }
    j["card"] = std::move(card);
  }
  // Keys beyond the contract: where the report was, and the parts of the arithmetic.
  j["line"] = r.line;
  if (r.kind == OomKind::allocator) {
    j["non_pytorch_gib"] = gib6(d.non_pytorch);
    j["non_pytorch_estimated"] = d.non_pytorch_estimated;
    put(j, "footprint_gib", d.footprint);
  }
  put(j, "private_pools_gib", r.private_pools);
  put(j, "allowed_gib", r.allowed);
  put(j, "kv_cache_needed_gib", r.kv_cache_needed);
  put(j, "kv_cache_available_gib", r.kv_cache_available);
  if (r.gpu_blocks) {
    j["gpu_blocks"] = *r.gpu_blocks;
  }
  if (!r.other_processes.empty()) {
    j["other_processes"] = nlohmann::json::array();
    for (const auto& p : r.other_processes) {
      j["other_processes"].push_back({{"pid", p.pid}, {"used_gib", gib6(p.used)}});
    }
  }
  if (d.on_card) {
    j["on_card"] = {{"card", d.on_card->card.card}, {"usable_gib", gib6(d.on_card->card.usable)},
                    {"limit_gib", gib6(d.on_card->limit)}, {"need_gib", gib6(d.on_card->need)}, {"fits", d.on_card->fits}};
  }
  return j;
}

// Word-wraps `text` at 80 columns with `indent` spaces on every line after the first.
std::string wrap(std::string_view text, std::size_t indent, std::size_t first_used = 0)
{
  std::string out;
  std::size_t col = first_used;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t sp = text.find(' ', i);
    const std::string_view word = text.substr(i, sp == std::string_view::npos ? std::string_view::npos : sp - i);
    if (col > indent && col + 1 + word.size() > 80) {
      out += '\n' + std::string(indent, ' ');
      col = indent;
    } else if (col > first_used && !(col == indent && out.ends_with(' '))) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    i = sp == std::string_view::npos ? text.size() : sp + 1;
  }
  return out;
}

void verdicts(std::ostream& o, const OomReport& r, const OomDiagnosis& d)
{
  const auto holds = [&](OomCause c) { return std::find(d.causes.begin(), d.causes.end(), c) != d.causes.end(); };
  const auto line = [&](OomCause c, const std::string& why) {
    o << "  " << (holds(c) ? "yes" : "no ") << "  " << wrap(fmt::format("{}: {}", to_string(c), why), 7, 7) << '\n';
  };
  o << "\nCauses (checked in this order):\n";
  if (r.requested && r.total) {
    line(OomCause::allocation_exceeds_card, fmt::format("the one request ({}) against the whole card ({})", gib(*r.requested), gib(*r.total)));
  }
  if (d.other_processes) {
    const Bytes bar{std::max<std::uint64_t>(k_gib, r.total.value_or(Bytes{}).n / 10)};
    line(OomCause::other_process, fmt::format("others hold {}; it counts from {} (1 GiB or 10% of the card){}", gib(*d.other_processes),
                                              gib(bar), d.other_may_be_self ? "; the one listed may be this process itself (container PIDs)" : ""));
  }
  if (r.reserved_unallocated && r.requested && r.total) {
    line(OomCause::fragmentation, fmt::format("{} reserved but unallocated, against the {} asked and 5% of the card ({})",
                                              gib(*r.reserved_unallocated), gib(*r.requested), gib(Bytes{r.total->n / 20})));
  }
  if (d.need && r.total) {
    const Bytes left = *r.total - d.other_processes.value_or(Bytes{});
    line(OomCause::job_too_large, fmt::format("needs {}, against 95% of the {} left to it ({})", gib(*d.need), gib(left), gib(oom_fit_limit(left))));
  }
}

void text_view(std::ostream& o, const OomReport& r, const OomDiagnosis& d, bool color)
{
  const std::string b = color ? "\x1b[1m" : "";
  const std::string e = color ? "\x1b[0m" : "";
  const std::string where = fmt::format("line {}", r.line);
  if (r.kind == OomKind::allocator) {
    o << b << "PyTorch ran out of GPU memory" << (r.device ? fmt::format(" on GPU {}", *r.device) : "") << e << " ("
      << (r.format == OomFormat::unknown ? std::string("message without numbers") : std::string(to_string(r.format))) << ", " << where << ")\n\n";
    const auto row = [&](std::string_view label, const std::optional<Bytes>& v, const std::string& note) {
      if (v) {
        o << fmt::format("  {:<18}{:>11}  {}\n", label, gib(*v), note);
      }
    };
    row("asked for", r.requested, "one allocation");
    row("card total", r.total, r.free ? fmt::format("{} free at the time", gib(*r.free)) : "");
    row("this process", d.footprint,
        r.allocated && r.reserved_unallocated
            ? fmt::format("{:.2f} alloc + {:.2f} unused + {:.2f} {}", to_gib(*r.allocated), to_gib(*r.reserved_unallocated),
                          to_gib(d.non_pytorch), d.non_pytorch_estimated ? "ctx (est.)" : "non-PyTorch")
            : "");
    row("other processes", d.other_processes,
        r.other_process_count > 0 ? fmt::format("{} listed in the message", r.other_process_count) : "card total - free - this process");
    row("needed", d.need, "allocated + asked + non-PyTorch");
    if (d.causes.empty()) {
      o << '\n'
        << wrap("No cause holds: free memory looked sufficient. Suspect a concurrent allocation (another stream or process at "
                "the same moment), a limit outside PyTorch (MIG slice, WSL2, set_per_process_memory_fraction) or a truncated "
                "message.",
                0)
        << '\n';
    }
    verdicts(o, r, d);
  } else if (r.kind == OomKind::kv_cache_too_small) {
    o << b << "vLLM: the KV cache cannot hold one request of the model's full context" << e << " (" << where << ")\n\n";
    if (r.max_model_len) {
      o << fmt::format("  {:<22}{:>10} tokens\n", "model's max seq len", *r.max_model_len);
    }
    if (r.kv_cache_tokens) {
      o << fmt::format("  {:<22}{:>10} tokens\n", r.kv_cache_needed ? "longest that fits" : "KV cache holds", *r.kv_cache_tokens);
    }
    if (r.kv_cache_needed && r.kv_cache_available) {
      o << fmt::format("  {:<22}{:>10}  (available {})\n", "KV cache needed", gib(*r.kv_cache_needed), gib(*r.kv_cache_available));
    }
    o << '\n' << wrap("vLLM refuses to start unless one sequence of max_model_len tokens fits in the KV cache it could allocate.", 0) << '\n';
  } else if (r.kind == OomKind::no_kv_cache_memory) {
    o << b << "vLLM: no memory left for the KV cache" << e << " (" << where
      << (r.gpu_blocks ? fmt::format(", # GPU blocks: {}", *r.gpu_blocks) : "") << ")\n\n"
      << wrap("After loading the weights and profiling the activation peak, nothing of gpu_memory_utilization x the card was "
              "left for KV-cache blocks.",
              0)
      << '\n';
  } else {
    o << b << "llama.cpp could not allocate a GPU buffer" << e << " (cudaMalloc failed, " << where << ")\n\n";
    if (r.requested) {
      o << fmt::format("  {:<18}{:>11}  on device {}\n", "buffer", gib(*r.requested), r.device.value_or(0));
    }
    o << '\n' << wrap("The message gives no card total: the card must hold at least this buffer, plus what was already loaded.", 0) << '\n';
  }
  o << "\nFixes, in order:\n";
  for (std::size_t i = 0; i < d.fixes.size(); ++i) {
    const auto& f = d.fixes[i];
    const std::string num = fmt::format("  {}. ", i + 1);
    o << num << wrap(f.description, 5, num.size()) << '\n';
    if (!f.command.empty()) {
      o << "     $ " << f.command << '\n';
    }
  }
  if (d.on_card) {
    const auto& v = *d.on_card;
    o << '\n'
      << wrap(fmt::format("On the {}: {} usable, {} after the 5% margin; this job needs {}: {}.",
                          v.card.display.empty() ? v.card.card : v.card.display, gib(v.card.usable), gib(v.limit), gib(v.need),
                          v.fits ? "it fits" : "it does NOT fit"),
              0)
      << '\n';
  }
}

int run_oom(Services& s, const OomOptions& o)
{
  std::optional<OomCardOption> given;
  if (!o.card.empty()) {
    auto card = find_card(o.card);
    if (!card) {
      return report_error(s, Error{Errc::usage, "oom --card: " + card.error().message});
    }
    given = OomCardOption{card->id, card->display, card->usable, {}, 1, std::nullopt};
  }
  auto report = read_report(s, o);
  if (!report) {
    return report_error(s, report.error());
  }
  const auto options = card_options();
  const OomDiagnosis d = diagnose_oom(*report, options, given);
  if (s.global.json) {
    s.out << to_json(*report, d).dump() << '\n';
  } else {
    text_view(s.out, *report, d, s.color_out());
  }
  if (given && !d.on_card) {
    report_warning(s, "oom --card: the message does not give what the job needs, so the fit on that card cannot be told");
  }
  return d.on_card && !d.on_card->fits ? exit_code_for(Errc::refused) : 0;
}

}  // namespace

void add_oom_command(CLI::App& app, Services& s)
{
  auto options = std::make_shared<OomOptions>();
  auto* sub = app.add_subcommand("oom", "explain a CUDA out-of-memory error (PyTorch, vLLM, llama.cpp) from a log or stdin");
  sub->add_option("file", options->file, "the log or error text; - or nothing reads stdin");
  sub->add_option("--card", options->card, "also tell whether the job would fit on this card (exit 3 when not)");
  sub->callback([&s, options] { s.exit_code = run_oom(s, *options); });
}

}  // namespace gpurent
