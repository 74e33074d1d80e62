// SPDX-License-Identifier: MIT
#include "sync/push_agent.hpp"

#include <charconv>

#include "sync/backup.hpp"
#include "sync/backup_agent.hpp"
#include "sync/range_agent.hpp"
#include "sync/range_plan.hpp"

namespace gpurent {
namespace {

std::optional<int> to_int(std::string_view s)
{
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

std::string partial_of(std::string_view rel)
{
  return std::string(rel) + std::string(k_partial_suffix);
}

}  // namespace

std::string push_agent_command(std::string_view dir, bool list)
{
  std::string s = "d=" + remote_shell_path(dir) +
                  "\n"
                  "fail() { printf 'gpurent-agent-error\\0%s\\0' \"$1\"; exit 3; }\n"
                  "case $(tar --version 2>/dev/null) in *'GNU tar'*) ;; *) fail tar;; esac\n"
                  "t=$(mktemp 2>/dev/null) || fail mktemp\n"
                  "trap 'rm -f \"$t\" \"$t.err\" \"$t\".p? \"$t\".h?' EXIT\n"
                  // private like mktemp's own file; not a umask for the whole agent, whose tar
                  // must give the pushed files their own modes
                  "(umask 077 && : > \"$t.err\") || fail mktemp\n"
                  "printf 'gpurent-agent-1\\0d\\0'\n";
  // The directory is listed where it exists and created only once something is sent (after the
  // first line of input), so an agent the client closes unused (a refused push) changes nothing.
  s += "in=\n";
  if (list) {
    // Without GNU find the listing is empty: everything is sent, which is still right.
    s += "if cd -- \"$d\" 2>/dev/null; then in=1\n"
         "if [ \"$(find . -maxdepth 0 -printf x 2>/dev/null)\" = x ]; then\n"
         "  LC_ALL=C find . -mindepth 1 -printf '%y\\0%s\\0%T@\\0%m\\0%P\\0%l\\0' 2>/dev/null; printf 'END\\0%d\\0' $?\n"
         "else printf 'END\\0%s\\0' 127; fi\n"
         "else printf 'END\\0%s\\0' 0; fi\n";
  } else {
    s += "printf 'END\\0%s\\0' 0\n";
  }
  s += "IFS= read -r n || exit 0\n"
       "if [ -z \"$in\" ]; then\n"
       "  mkdir -p -- \"$d\" 2>/dev/null || fail mkdir\n"
       "  cd -- \"$d\" || fail cd\n"
       "fi\n"
       "case $n in ''|*[!0-9]*) fail protocol;; esac\n"
       "if [ \"$n\" -gt 0 ]; then dd bs=\"$n\" count=1 iflag=fullblock of=\"$t\" 2>/dev/null || fail protocol; else : > \"$t\"; fi\n"
       "tar -xf - --no-same-owner --delay-directory-restore 2>\"$t.err\"\n"
       "s=$?\n"
       "printf 'gpurent-push\\0%d\\0' $s\n"
       "[ -s \"$t.err\" ] && head -c 4000 \"$t.err\" >&2\n"
       "(\n" +
       parallel_hash_script("t") + ") 2>/dev/null\n";
  return s;
}

std::string push_agent_preamble(const std::vector<std::string>& hash_paths)
{
  std::string list;
  for (const auto& p : hash_paths) {
    list += p;
    list.push_back('\0');
  }
  return std::to_string(list.size()) + "\n" + list;
}

Result<PushTrailer> parse_push_trailer(std::string_view out, const std::vector<std::string>& asked)
{
  constexpr std::string_view marker = "gpurent-push";
  if (const auto why = agent_error_word(out)) {  // the agent stopped (fail in push_agent_command)
    if (why == "mkdir" || why == "cd") {
      return fail(Errc::refused, "the server could not " + std::string(*why == "cd" ? "enter" : "create") +
                                     " the remote directory (a file in its way, or no permission); move what is in its way on the "
                                     "server, or push to another directory with --to");
    }
    return fail(Errc::invalid_input, "push agent: stopped (" + std::string(why->substr(0, 40)) + "); re-run the push");
  }
  if (!out.starts_with(marker) || out.size() <= marker.size() || out[marker.size()] != '\0') {
    return fail(Errc::invalid_input, "push agent: no report after the archive (the server's tar or shell stopped); re-run the push");
  }
  out.remove_prefix(marker.size() + 1);
  const auto nul = out.find('\0');
  const auto status = nul == std::string_view::npos ? std::nullopt : to_int(out.substr(0, nul));
  if (!status) {
    return fail(Errc::invalid_input, "push agent: unreadable tar status; re-run the push");
  }
  PushTrailer t;
  t.tar_status = *status;
  out.remove_prefix(nul + 1);
  if (asked.empty() && out.empty()) {
    t.hashes.tool = "none";
    return t;
  }
  TRY_ASSIGN(t.hashes, parse_hash_output(out, asked));
  return t;
}

std::string range_write_command(std::string_view dir, std::string_view rel, std::uint64_t offset, std::uint64_t length)
{
  // The bytes are hashed as they arrive (tee into a FIFO read by the hashing tool), so the
  // range's SHA-256 costs no second read; the whole file is hashed again from disk at the end.
  // dd reports the bytes it wrote (C locale); a range that arrived whole and hashed is
  // appended to the range ledger, which a later push checks against the local file's bytes.
  const std::string write = "LC_ALL=C dd of=\"$f\" bs=1048576 oflag=seek_bytes seek=" + std::to_string(offset) +
                            " conv=notrunc 2>\"$e\"";
  // The directory is made here too: the agent that lists it makes it only once it is sent files.
  return "mkdir -p -- " + remote_shell_path(dir) + " 2>/dev/null; cd -- " + remote_shell_path(dir) +
         " || { printf 'gpurent-range\\0cd\\0\\0'; exit 3; }\n" + "f=" +
         shell_quote(partial_of(rel)) +
         "\n"
         "case $f in */*) mkdir -p -- \"${f%/*}\";; esac\n" +
         std::string(pick_hash_lines()) +
         "h=\n"
         "e=/dev/null\n"
         "if t=$(mktemp -d 2>/dev/null); then e=\"$t/e\"; else t=; fi\n"
         "if [ -n \"$H\" ] && [ -n \"$t\" ] && mkfifo \"$t/p\"; then\n"
         "  $H < \"$t/p\" > \"$t/h\" 2>/dev/null &\n"
         "  tee \"$t/p\" | " +
         write +
         "\n"
         "  s=$?\n"
         "  wait\n"
         "  h=$(cut -c1-64 < \"$t/h\")\n"
         "else\n  " +
         write +
         "\n"
         "  s=$?\n"
         "fi\n"
         "n=$(sed -n 's/^\\([0-9][0-9]*\\) bytes.*/\\1/p' \"$e\" 2>/dev/null)\n"
         "if [ -n \"$t\" ]; then rm -rf -- \"$t\"; fi\n"
         "if [ \"$s\" = 0 ] && [ -n \"$h\" ] && [ \"$n\" = " +
         std::to_string(length) + " ]; then (umask 077 && printf '%s %s %s\\n' " + std::to_string(offset) + " " + std::to_string(length) +
         " \"$h\" >> \"$f" + std::string(k_range_ledger_suffix) + "\"); fi\n"  // gpurent's ledger: private; the file keeps its own mode
         "printf 'gpurent-range\\0%s\\0%s\\0' \"$s\" \"$h\"\n";
}

std::string push_ledger_command(std::string_view dir, const std::vector<std::string>& rels)
{
  std::string s = "cd -- " + remote_shell_path(dir) + " || exit 3\n"
                  "led() { if [ -f \"$1.gpurent-partial\" ] && [ -f \"$1.gpurent-partial.ranges\" ]; then\n"
                  "  printf '%s\\0' \"$1\"; head -c 1048576 -- \"$1.gpurent-partial.ranges\" | tr -d '\\000'; printf '\\0'; fi; }\n";
  for (const auto& r : rels) {
    s += "led " + shell_quote(r) + "\n";
  }
  return s;
}

Result<std::map<std::string, std::vector<PushLedgerRange>>> parse_push_ledgers(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.size() % 2 != 0) {
    return fail(Errc::invalid_input, "push: unreadable range ledgers");
  }
  std::map<std::string, std::vector<PushLedgerRange>> res;
  for (std::size_t i = 0; i < f.size(); i += 2) {
    auto& ranges = res[std::string(f[i])];
    std::string_view text = f[i + 1];
    while (!text.empty()) {
      const auto nl = text.find('\n');
      if (nl == std::string_view::npos) {
        break;  // a last line without its newline was cut short
      }
      const std::string_view line = text.substr(0, nl);
      text.remove_prefix(nl + 1);
      const auto sp1 = line.find(' ');
      const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos) {
        continue;
      }
      PushLedgerRange r;
      const auto a = line.substr(0, sp1);
      const auto b = line.substr(sp1 + 1, sp2 - sp1 - 1);
      const auto h = line.substr(sp2 + 1);
      const auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), r.offset);
      const auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), r.length);
      if (ea != std::errc{} || pa != a.data() + a.size() || a.empty() || eb != std::errc{} || pb != b.data() + b.size() || b.empty() ||
          !is_hex_digest(h)) {
        continue;
      }
      r.sha256 = std::string(h);
      ranges.push_back(std::move(r));
    }
  }
  return res;
}

Result<RangeResult> parse_range_result(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.size() != 3 || f[0] != "gpurent-range") {
    return fail(Errc::invalid_input, "push: a range upload printed no report (the server's shell or dd stopped)");
  }
  if (f[1] == "cd") {
    return fail(Errc::not_found, "push: the remote directory vanished during the upload");
  }
  const auto status = to_int(f[1]);
  if (!status || (!f[2].empty() && !is_hex_digest(f[2]))) {
    return fail(Errc::invalid_input, "push: unreadable range report");
  }
  return RangeResult{*status, std::string(f[2])};
}

std::string finalize_command(std::string_view dir, const std::vector<BigFileFinal>& files)
{
  std::string s = "cd -- " + remote_shell_path(dir) + " || exit 3\n" + std::string(pick_hash_lines()) +
                  "fin() {\n"
                  "  p=\"$1.gpurent-partial\"; h=\n"
                  "  n=$(wc -c < \"$p\" 2>/dev/null) || n=0\n"
                  "  if [ \"$n\" -ge \"$2\" ] && truncate -s \"$2\" -- \"$p\" 2>/dev/null; then\n"
                  "    [ -n \"$H\" ] && h=$($H < \"$p\" | cut -c1-64)\n"
                  "    if [ \"$h\" = \"$3\" ] || [ -z \"$H\" ]; then\n"
                  "      chmod \"$4\" -- \"$p\"; touch -m -d \"@$5\" -- \"$p\"\n"
                  "      if mv -f -- \"$p\" \"$1\"; then rm -f -- \"$p.ranges\"; printf 'ok\\0%s\\0%s\\0' \"$1\" \"$h\"; return; fi\n"
                  "    fi\n"
                  "  fi\n"
                  "  printf 'bad\\0%s\\0%s\\0' \"$1\" \"$h\"\n"
                  "}\n";
  for (const auto& f : files) {
    char mode[8];
    const auto r = std::to_chars(mode, mode + sizeof mode, f.mode & 07777U, 8);
    s += "fin " + shell_quote(f.rel) + " " + std::to_string(f.size) + " " + shell_quote(f.sha256) + " " +
         std::string(mode, r.ptr) + " " + std::to_string(f.mtime_s < 0 ? 0 : f.mtime_s) + "\n";
  }
  return s;
}

Result<std::map<std::string, FinalResult>> parse_finalize_output(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.size() % 3 != 0) {
    return fail(Errc::invalid_input, "push: unreadable report of the finished large files");
  }
  std::map<std::string, FinalResult> res;
  for (std::size_t i = 0; i < f.size(); i += 3) {
    if ((f[i] != "ok" && f[i] != "bad") || (!f[i + 2].empty() && !is_hex_digest(f[i + 2]))) {
      return fail(Errc::invalid_input, "push: unreadable report of the finished large files");
    }
    res[std::string(f[i + 1])] = FinalResult{f[i] == "ok", std::string(f[i + 2])};
  }
  return res;
}

}  // namespace gpurent
