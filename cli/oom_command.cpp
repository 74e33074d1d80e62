// SPDX-License-Identifier: MIT
// `gpurent oom [FILE|-] [--card C]`: explains the last out-of-memory error in a log.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/oom_job.hpp"
#include "cli/oom_view.hpp"
#include "cli/services.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "oom/diagnose.hpp"
#include "oom/parse.hpp"

namespace gpurent {
namespace {

// 64 KiB reads: the log streams, never loaded whole. The buffer is left uninitialised so that a
// short log touches only the pages it fills (a zeroed 1 MiB cost 256 page faults per start).
constexpr std::size_t k_read_chunk = 64 * 1024;

struct OomOptions {
  std::string file = "-";
  std::string card;
};

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

int run_oom(Services& s, const OomOptions& o)
{
  std::optional<OomCardOption> given;
  std::optional<Card> given_card;
  if (!o.card.empty()) {
    auto card = find_card(o.card);
    if (!card) {
      return report_error(s, Error{Errc::usage, "oom --card: " + card.error().message});
    }
    given = OomCardOption{card->id, card->display, card->usable, {}, 1, std::nullopt};
    given_card = *card;
  }
  auto report = read_report(s, o);
  if (!report) {
    return report_error(s, report.error());
  }
  const auto options = card_options();
  // The job the log ran, sized by plan's estimate: the verdict and the card are plan's.
  const OomDiagnosis d = diagnose_oom(*report, options, given, estimate_log_job(*report, given_card, options));
  if (s.global.json) {
    s.out << oom_json(*report, d).dump() << '\n';
  } else {
    oom_text(s.out, *report, d, s.color_out());
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
  auto* sub = app.add_subcommand(
      "oom", "explain an out-of-memory error (PyTorch, vLLM, SGLang, TGI, llama.cpp, Ollama, JAX, TensorFlow, NCCL) from a log or stdin");
  sub->add_option("file", options->file, "the log or error text; - or nothing reads stdin");
  sub->add_option("--card", options->card, "also tell whether the job would fit on this card (exit 3 when not)");
  sub->callback([&s, options] { s.exit_code = run_oom(s, *options); });
}

}  // namespace gpurent
