// SPDX-License-Identifier: MIT
#pragma once
// PURE: the remote commands gpurent runs for listing and hashing, and parsers of their output.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

// The NUL-terminated fields of a remote command's output; an unterminated tail is not a field.
[[nodiscard]] std::vector<std::string_view> split_nul_fields(std::string_view out);
// A SHA-256 as the hashing tools print it: 64 lowercase hex digits.
[[nodiscard]] bool is_hex_digest(std::string_view s) noexcept;
// POSIX-shell single quoting ('it'\''s').
[[nodiscard]] std::string shell_quote(std::string_view s);
// A remote command from its words, as `gpurent ssh` and `gpurent run` take them: one word is a
// shell command line as typed ("python a.py && python b.py"), several are that exact argument
// list (each quoted).
[[nodiscard]] std::string command_line_text(const std::vector<std::string>& words);
// A remote path as the shell should see it, quoted: "~" and "~/x" become paths relative to the
// login directory (".", "./x"); a relative path gets "./" in front ("-x" -> "./-x"), so no
// remote tool ever reads it as an option; an absolute one is kept as it is.
[[nodiscard]] std::string remote_shell_path(std::string_view path);

// `find` printing, per entry, NUL-terminated: type, size, mtime (%T@), mode (octal), path
// relative to the root, link target.
[[nodiscard]] std::string find_listing_command(std::string_view root);
[[nodiscard]] Result<std::vector<RemoteEntry>> parse_find_listing(std::string_view out);
// The inverse, used by tests and fakes.
[[nodiscard]] std::string render_find_listing(const std::vector<RemoteEntry>& entries);
// "1700000000.123456789" -> ns; nullopt when malformed.
[[nodiscard]] std::optional<std::int64_t> parse_epoch_ns(std::string_view s) noexcept;

// A shell script that hashes the NUL-separated relative paths on its stdin under `root`;
// prints the tool name ("openssl", "sha256sum", "shasum", "none") then NUL, then the tool's
// output. OpenSSL comes first: its SHA-256 uses the CPU's SHA instructions and runs about 4x
// faster than coreutils' sha256sum (docs/backup.md), which matters when the server's CPU is
// also busy encrypting the transfer.
[[nodiscard]] std::string hash_command(std::string_view root);
// The same without the `cd`: hashes the paths on stdin relative to the current directory.
[[nodiscard]] std::string hash_script();
// The same output for the paths in the file named by the shell variable `list` ("t": "$t"), hashed
// by as many processes as the server has CPUs (at most 4) when the list is long: GNU split cuts it
// into runs of whole names, each hashed in the background, their output joined in order, so it
// reads exactly as one run (a push's 20,000 files: 0.29 s -> 0.13 s on 2 CPUs, issue #43). One run
// where split or nproc is missing. Leaves "$list.p<i>" and "$list.h<i>" for the caller to remove.
[[nodiscard]] std::string parallel_hash_script(std::string_view list);
struct HashOutput {
  std::string tool;                          // "none": no tool on the server
  std::map<std::string, std::string> sums;   // relative path -> hex
};
// `asked` are the paths sent to the script, in order: `openssl dgst -r` prints names raw (a
// newline in a name is not escaped), so its records are matched against them in turn. Only
// names asked get a hash, whatever the tool printed.
[[nodiscard]] Result<HashOutput> parse_hash_output(std::string_view out, const std::vector<std::string>& asked);

}  // namespace gpurent
