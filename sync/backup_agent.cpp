// SPDX-License-Identifier: MIT
#include "sync/backup_agent.hpp"

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_hello = "gpurent-agent-1";
constexpr std::string_view k_error = "gpurent-agent-error";
constexpr std::string_view k_end = "END";
constexpr std::string_view k_sums = "gpurent-sums";
constexpr std::size_t k_max_listing = std::size_t{1} << 30;  // 1 GiB of listing: not a real tree
constexpr std::size_t k_max_trailer = std::size_t{256} << 20;

// The field starting at `pos` (up to its NUL), or nullopt when its NUL has not arrived yet.
std::optional<std::string_view> field_at(std::string_view buf, std::size_t pos)
{
  const auto nul = buf.find('\0', pos);
  if (nul == std::string_view::npos) {
    return std::nullopt;
  }
  return buf.substr(pos, nul - pos);
}

}  // namespace

std::string agent_path_list(const std::vector<std::string>& rel_paths)
{
  std::string list;
  for (const auto& p : rel_paths) {
    list += p;
    list.push_back('\0');
  }
  return list;
}

std::optional<std::string_view> agent_error_word(std::string_view out)
{
  const auto first = field_at(out, 0);
  if (!first || *first != k_error) {
    return std::nullopt;
  }
  return field_at(out, k_error.size() + 1);
}

std::string backup_agent_command(std::string_view root)
{
  // `r` is the root as the shell sees it. A directory is listed from inside it (%P: paths
  // relative to it); a single file from its parent (%f: its name). tar and the hashes run
  // where the listing ran, on the paths the client sends back.
  return "umask 077\n"  // its lists and sums beside mktemp's file are private (it writes nothing else)
         "r=" + remote_shell_path(root) +
         "\n"
         "fail() { printf 'gpurent-agent-error\\0%s\\0' \"$1\"; exit 3; }\n"
         "[ -e \"$r\" ] || [ -L \"$r\" ] || fail missing\n"
         "if [ -d \"$r\" ]; then kind=d; cd -- \"$r\" || fail cd; else\n"
         "  kind=f; name=${r##*/}; case $r in */*) dir=${r%/*}; cd -- \"${dir:-/}\" || fail cd;; esac; fi\n"
         "[ \"$(find . -maxdepth 0 -printf x 2>/dev/null)\" = x ] || fail find\n"
         "case $(tar --version 2>/dev/null) in *'GNU tar'*) ;; *) fail tar;; esac\n"
         "t=$(mktemp 2>/dev/null) || fail mktemp\n"
         "trap 'rm -f \"$t\" \"$t.sums\"' EXIT\n"
         // A client that goes (its connection ended: the output's pipe breaks, the input ends) or a
         // hangup: exit, so that the EXIT trap removes the files (a signal's default would not).
         "trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 141' PIPE; trap 'exit 143' TERM\n"
         "printf 'gpurent-agent-1\\0%s\\0' \"$kind\"\n"
         "if [ $kind = d ]; then LC_ALL=C find -H . -mindepth 1 -printf '%y\\0%s\\0%T@\\0%m\\0%P\\0%l\\0' 2>/dev/null\n"
         "else LC_ALL=C find -H \"./$name\" -maxdepth 0 -printf '%y\\0%s\\0%T@\\0%m\\0%f\\0%l\\0' 2>/dev/null; fi\n"
         "printf 'END\\0%d\\0' $?\n"
         "cat > \"$t\"\n"
         "[ -s \"$t\" ] || exit 0\n"
         "(\n" +
         hash_script() +
         ") < \"$t\" > \"$t.sums\" 2>/dev/null &\n"
         "tar -cf - --format=gnu --null --verbatim-files-from --no-recursion -T \"$t\" 2>/dev/null\n"
         "s=$?\n"
         "wait\n"
         "printf 'gpurent-sums\\0%d\\0' $s\n"
         "cat \"$t.sums\"\n";
}

Result<void> AgentListingReader::feed(std::string_view data)
{
  if (m_done) {
    return fail(Errc::invalid_input, "backup agent: output after the listing before the paths were sent");
  }
  if (m_buf.size() + data.size() > k_max_listing) {
    return fail(Errc::invalid_input, "backup agent: the listing is over 1 GiB; back up a smaller tree");
  }
  m_buf.append(data);
  return scan();
}

Result<void> AgentListingReader::scan()
{
  const std::string_view buf = m_buf;
  if (!m_header) {
    const auto first = field_at(buf, 0);
    if (!first) {
      if (buf.size() > 64) {
        return fail(Errc::invalid_input, "backup agent: unexpected output; is a POSIX shell the login shell on the server?");
      }
      return {};
    }
    if (*first != k_hello && *first != k_error) {
      return fail(Errc::invalid_input, "backup agent: unexpected output; is a POSIX shell the login shell on the server?");
    }
    const auto second = field_at(buf, first->size() + 1);
    if (!second) {
      return {};
    }
    if (*first == k_error) {
      m_error = std::string(*second);
      m_done = true;
      return {};
    }
    if (*second != "d" && *second != "f") {
      return fail(Errc::invalid_input, "backup agent: unknown root kind");
    }
    m_kind = std::string(*second);
    m_header = true;
    m_pos = first->size() + 1 + second->size() + 1;
    m_records_begin = m_pos;
  }
  // Whole records of six fields; "END" where a type would be closes the listing. A type is
  // one character, so no record can be mistaken for the end.
  while (true) {
    const auto type = field_at(buf, m_pos);
    if (!type) {
      return {};
    }
    if (*type == k_end) {
      const auto status = field_at(buf, m_pos + k_end.size() + 1);
      if (!status) {
        return {};
      }
      m_records_end = m_pos;
      m_done = true;
      return {};
    }
    std::size_t p = m_pos;
    for (int i = 0; i < 6; ++i) {
      const auto f = field_at(buf, p);
      if (!f) {
        return {};
      }
      p += f->size() + 1;
    }
    m_pos = p;
  }
}

Result<std::vector<RemoteEntry>> AgentListingReader::result() const
{
  if (!m_done) {
    return fail(Errc::unavailable, "backup agent: the listing ended early (the connection or the remote shell stopped)");
  }
  if (m_error == "missing") {
    return fail(Errc::not_found, "the remote path does not exist; check the path");
  }
  if (!m_error.empty()) {
    return fail(Errc::unsupported, "backup agent: the server cannot run it (" + m_error + ")");
  }
  return parse_find_listing(std::string_view(m_buf).substr(m_records_begin, m_records_end - m_records_begin));
}

AgentCopyReader::AgentCopyReader(FileStreamHandler& handler) : m_tar(tar_engine().make_reader(handler, k_max_trailer)) {}

Result<BulkCopyReport> AgentCopyReader::finish(const std::vector<std::string>& asked) const
{
  TRY(m_tar->flush());
  if (!m_tar->finished()) {
    return fail(Errc::unavailable, "the tar stream ended early (the connection or the remote tar stopped); re-run the backup (it resumes)");
  }
  std::string_view rest = m_tar->after_end();
  while (!rest.empty() && rest.front() == '\0') {
    rest.remove_prefix(1);  // tar pads its archive to whole records
  }
  const auto marker = field_at(rest, 0);
  const auto status = marker ? field_at(rest, marker->size() + 1) : std::nullopt;
  if (!marker || *marker != k_sums || !status || m_tar->after_end_truncated()) {
    return fail(Errc::invalid_input, "backup agent: no hashes after the archive; re-run the backup");
  }
  rest.remove_prefix(marker->size() + 1 + status->size() + 1);
  BulkCopyReport report;
  report.stream.changed_while_read = *status != "0";
  TRY_ASSIGN(auto hashes, parse_hash_output(rest, asked));
  report.hashes = RemoteHashes{std::move(hashes.tool), std::move(hashes.sums)};
  return report;
}

}  // namespace gpurent
