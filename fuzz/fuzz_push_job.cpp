// SPDX-License-Identifier: MIT
// Fuzz target for the readers of `gpurent push/run/jobs` (what a server or a repository hands
// gpurent): the job agent's listing, start, kill and follow output, the push agent's trailer,
// range, range-ledger and finishing reports, push --delete's report and names and the record of earlier pushes, backup's range report, git's answers (ls-files -z, check-ignore -z -v, rev-parse), the
// likely-secret rules over names, first bytes and --allow-secret values, and .gitignore text
// with wildmatch. The first byte
// picks the reader (and the chunking of the follow stream); the rest is the input. Invariants:
// no crash or sanitizer report; a listing only yields valid job ids; the follow reader gives
// the same result in any chunking; the trailer never claims a hash for a name not asked; git's
// listing only yields paths that stay under the pushed directory, sorted and unique; an
// --allow-secret value never normalizes to a path that leaves it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sync/git_output.hpp"
#include "sync/ignore_rules.hpp"
#include "sync/job_agent.hpp"
#include "sync/push_agent.hpp"
#include "sync/push_delete.hpp"
#include "sync/push_record.hpp"
#include "sync/range_agent.hpp"
#include "sync/secret_guard.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const unsigned pick = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (pick % 8) {
  case 0:
    if (const auto jobs = gpurent::parse_job_list(text)) {
      for (const auto& j : *jobs) {
        if (!gpurent::is_valid_job_id(j.id)) {
          std::abort();
        }
        (void)gpurent::job_state(j);
      }
    }
    break;
  case 1:
    (void)gpurent::parse_job_start(text);
    (void)gpurent::parse_job_kill(text);
    (void)gpurent::parse_log_size(text);
    (void)gpurent::parse_push_delete(text);
    // push --delete never names a path outside the pushed directory.
    if (const auto input = gpurent::push_delete_input({std::string(text)})) {
      if (text.empty() || text.front() == '/' || text == ".." || text.starts_with("../") || text.find("/../") != std::string_view::npos ||
          text.ends_with("/..") || text.find('\0') != std::string_view::npos) {
        std::abort();
      }
    }
    // The record of earlier pushes: only paths inside the directory, and it writes back the same.
    if (const auto record = gpurent::read_push_record(text, "k", "d")) {
      if (gpurent::write_push_record("k", "d", *record) != std::string(text)) {
        std::abort();
      }
    }
    break;
  case 2: {
    gpurent::FollowControl whole;
    whole.feed(text);
    gpurent::FollowControl pieces;
    std::size_t step = 1 + pick / 8;
    for (std::size_t pos = 0; pos < text.size(); pos += step) {
      pieces.feed(text.substr(pos, step));
    }
    if (whole.end() != pieces.end() || whole.started() != pieces.started() || whole.missing() != pieces.missing()) {
      std::abort();  // the chunking changed what was read
    }
    (void)whole.exit_code();
    break;
  }
  case 3: {
    const std::vector<std::string> asked{"a", "b/c", "d\ne"};
    if (const auto t = gpurent::parse_push_trailer(text, asked)) {
      for (const auto& [name, hex] : t->hashes.sums) {
        if (name != "a" && name != "b/c" && name != "d\ne") {
          std::abort();
        }
      }
    }
    break;
  }
  case 4:
    (void)gpurent::parse_range_result(text);
    (void)gpurent::parse_finalize_output(text);
    if (const auto ledgers = gpurent::parse_push_ledgers(text)) {
      for (const auto& [rel, lines] : *ledgers) {
        for (const auto& l : lines) {
          if (l.sha256.size() != 64) {
            std::abort();  // a line is kept only with a whole SHA-256
          }
        }
      }
    }
    if (const auto r = gpurent::parse_range_read_report(text); r && !r->missing && !r->sha256.empty() && r->sha256.size() != 64) {
      std::abort();
    }
    break;
  case 5: {
    if (const auto listing = gpurent::parse_ls_files(text)) {
      for (const auto* v : {&listing->files, &listing->nested}) {
        for (std::size_t i = 0; i < v->size(); ++i) {
          if (!gpurent::safe_relative_path((*v)[i]) || (i > 0 && (*v)[i - 1] >= (*v)[i])) {
            std::abort();  // a path that leaves the pushed directory, or not sorted and unique
          }
        }
      }
    }
    (void)gpurent::parse_check_ignore(text);
    if (const auto id = gpurent::parse_commit_id(text); id && id->size() != 40 && id->size() != 64) {
      std::abort();
    }
    (void)gpurent::secret_by_name(text);
    (void)gpurent::secret_by_content(text);
    const auto allowed = gpurent::normalize_allowed_path(text);
    if (!allowed.empty() && (allowed.front() == '/' || !gpurent::safe_relative_path(allowed))) {
      std::abort();
    }
    (void)gpurent::secret_allowed(text, {allowed, "a"});
    break;
  }
  case 6: {
    gpurent::IgnoreMatcher m;
    m.push_dir(gpurent::parse_ignore_file(text, "", ".gitignore"), {});
    for (const char* path : {"a", "a/b", "build", "x.log", "d/e/f.txt"}) {
      (void)m.decide(path, true);
      (void)m.decide(path, false);
    }
    break;
  }
  default: {
    // pattern NUL text
    const auto nul = text.find('\0');
    const std::string_view pattern = text.substr(0, nul);
    const std::string_view subject = nul == std::string_view::npos ? std::string_view{} : text.substr(nul + 1);
    (void)gpurent::wildmatch(pattern, subject, true);
    (void)gpurent::wildmatch(pattern, subject, false);
    break;
  }
  }
  return 0;
}
