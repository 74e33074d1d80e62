// SPDX-License-Identifier: MIT
#pragma once
// An in-memory SshSession for backup tests: a map of remote paths to entries and contents,
// with fault injection (connection cut after N bytes, a file changing during its copy, a
// wrong server-side hash, no hashing tool) and a log of the reads.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sync/sha256.hpp"
#include "sync/transport.hpp"

namespace gpurent::testing {

class MemoryTransport final : public SshSession {
public:
  struct Node {
    RemoteEntry entry;    // entry.path unused; the map key is the full remote path
    std::string content;  // files
  };
  struct Read {
    std::string path;
    std::uint64_t offset = 0;
  };

  std::map<std::string, Node> nodes;  // full remote path ("/data/x/y") -> node
  std::vector<Read> reads;
  std::optional<std::uint64_t> cut_after_bytes;         // connection "lost" after this many bytes (once)
  std::map<std::string, std::string> change_after_read;  // path -> new content, applied once after its read
  std::map<std::string, std::string> wrong_hash;         // path -> hash the "server" reports
  bool have_hash_tool = true;
  bool have_tar = true;
  bool have_agent = true;  // the one-channel backup (needs tar too)
  int agent_calls = 0;
  int stream_calls = 0;
  std::size_t chunk = 4096;
  int list_calls = 0;

  void add_file(const std::string& path, std::string content, std::int64_t mtime_ns = 1'700'000'000'000'000'000LL,
                std::uint32_t mode = 0644)
  {
    const auto size = content.size();
    nodes[path] = Node{RemoteEntry{{}, EntryKind::file, size, mtime_ns, mode, {}}, std::move(content)};
  }
  void add_dir(const std::string& path, std::uint32_t mode = 0755)
  {
    nodes[path] = Node{RemoteEntry{{}, EntryKind::directory, 0, 1'700'000'000'000'000'000LL, mode, {}}, {}};
  }
  void add_link(const std::string& path, const std::string& target)
  {
    nodes[path] = Node{RemoteEntry{{}, EntryKind::symlink, target.size(), 1'700'000'000'000'000'000LL, 0777, target}, {}};
  }

  std::string host_key_fingerprint() const override { return "SHA256:memory"; }

  Result<ExecResult> exec(const std::string& command, std::string_view) override
  {
    return ExecResult{"", "memory transport: no shell for " + command, 127};
  }

  Result<std::vector<RemoteEntry>> list_tree(const std::string& root) override
  {
    ++list_calls;
    std::vector<RemoteEntry> out;
    const std::string prefix = root + "/";
    bool found = false;
    for (const auto& [path, node] : nodes) {
      if (path == root) {
        found = true;
      }
      if (path.rfind(prefix, 0) == 0) {
        RemoteEntry e = node.entry;
        e.path = path.substr(prefix.size());
        out.push_back(std::move(e));
        found = true;
      }
    }
    if (!found) {
      return std::unexpected(Error{Errc::not_found, "no such remote path " + root});
    }
    return out;
  }

  Result<RemoteEntry> stat(const std::string& path) override
  {
    const auto it = nodes.find(path);
    if (it == nodes.end()) {
      return std::unexpected(Error{Errc::not_found, "no such file " + path});
    }
    return it->second.entry;
  }

  Result<std::uint64_t> read_file(const std::string& path, std::uint64_t offset, const DataSink& sink) override
  {
    reads.push_back(Read{path, offset});
    const auto it = nodes.find(path);
    if (it == nodes.end() || it->second.entry.kind != EntryKind::file) {
      return std::unexpected(Error{Errc::not_found, "open " + path + ": no such file"});
    }
    const std::string data = it->second.content;
    std::uint64_t sent = 0;
    for (std::uint64_t pos = offset; pos < data.size();) {
      std::size_t n = std::min<std::size_t>(chunk, data.size() - pos);
      if (cut_after_bytes) {
        if (*cut_after_bytes == 0) {
          cut_after_bytes.reset();
          return std::unexpected(Error{Errc::unavailable, "read " + path + ": the connection was lost"});
        }
        n = static_cast<std::size_t>(std::min<std::uint64_t>(n, *cut_after_bytes));
        *cut_after_bytes -= n;
      }
      if (auto r = sink(data.data() + pos, n); !r) {
        return std::unexpected(r.error());
      }
      pos += n;
      sent += n;
    }
    if (const auto c = change_after_read.find(path); c != change_after_read.end()) {
      it->second.content = c->second;
      it->second.entry.size = c->second.size();
      it->second.entry.mtime_ns += 1'000'000'000LL;
      change_after_read.erase(c);
    }
    return sent;
  }

  Result<StreamReport> stream_files(const std::string& root, const std::vector<std::string>& rel_paths,
                                    FileStreamHandler& handler) override
  {
    if (!have_tar) {
      return std::unexpected(Error{Errc::unsupported, "memory transport: no tar"});
    }
    ++stream_calls;
    StreamReport report;
    for (const auto& rel : rel_paths) {
      const auto it = nodes.find(root + "/" + rel);
      if (it == nodes.end() || it->second.entry.kind != EntryKind::file) {
        continue;
      }
      const std::string& data = it->second.content;
      if (auto r = handler.begin_file(rel, data.size()); !r) {
        return std::unexpected(r.error());
      }
      if (auto r = handler.file_data(data.data(), data.size()); !r) {
        return std::unexpected(r.error());
      }
      if (auto r = handler.end_file(); !r) {
        return std::unexpected(r.error());
      }
      // A change "during the read" is what GNU tar reports with exit status 1.
      if (const auto c = change_after_read.find(root + "/" + rel); c != change_after_read.end()) {
        it->second.content = c->second;
        it->second.entry.size = c->second.size();
        it->second.entry.mtime_ns += 1'000'000'000LL;
        change_after_read.erase(c);
        report.changed_while_read = true;
      }
    }
    return report;
  }

  // The one-channel backup: the listing, then the stream and the hashes (taken before the
  // stream, as the server's hashing reads the files while they are copied).
  class Agent final : public BackupChannel {
  public:
    Agent(MemoryTransport& t, std::string root) : m_t(t), m_root(std::move(root)) {}
    Result<std::vector<RemoteEntry>> listing() override
    {
      const auto it = m_t.nodes.find(m_root);
      if (it != m_t.nodes.end() && it->second.entry.kind == EntryKind::file) {
        ++m_t.list_calls;
        m_file = true;
        RemoteEntry e = it->second.entry;
        e.path = m_root.substr(m_root.rfind('/') + 1);
        return std::vector<RemoteEntry>{e};
      }
      return m_t.list_tree(m_root);
    }
    bool root_is_file() const override { return m_file; }
    Result<BulkCopyReport> copy(const std::vector<std::string>& rel_paths, FileStreamHandler& handler) override
    {
      if (rel_paths.empty()) {
        return BulkCopyReport{};
      }
      const std::string dir = m_file ? m_root.substr(0, m_root.rfind('/')) : m_root;
      auto job = m_t.start_sha256(dir, rel_paths);
      if (!job) {
        return std::unexpected(job.error());
      }
      auto hashes = (*job)->wait();
      if (!hashes) {
        return std::unexpected(hashes.error());
      }
      auto stream = m_t.stream_files(dir, rel_paths, handler);
      if (!stream) {
        return std::unexpected(stream.error());
      }
      return BulkCopyReport{*stream, *hashes};
    }

  private:
    MemoryTransport& m_t;
    std::string m_root;
    bool m_file = false;
  };

  Result<std::unique_ptr<BackupChannel>> open_backup_channel(const std::string& root) override
  {
    if (!have_agent || !have_tar) {
      return std::unexpected(Error{Errc::unsupported, "memory transport: no backup agent"});
    }
    ++agent_calls;
    return std::unique_ptr<BackupChannel>(std::make_unique<Agent>(*this, root));
  }

  class Job final : public RemoteHashJob {
  public:
    explicit Job(RemoteHashes hashes) : m_hashes(std::move(hashes)) {}
    Result<RemoteHashes> wait() override { return m_hashes; }

  private:
    RemoteHashes m_hashes;
  };

  // Hashes are taken when the job starts, as a real server reads the files while they are copied.
  Result<std::unique_ptr<RemoteHashJob>> start_sha256(const std::string& root, const std::vector<std::string>& rel_paths) override
  {
    if (!have_hash_tool) {
      return std::unique_ptr<RemoteHashJob>(std::make_unique<Job>(RemoteHashes{"none", {}}));
    }
    std::map<std::string, std::string> sums;
    for (const auto& rel : rel_paths) {
      const std::string full = root + "/" + rel;
      const auto it = nodes.find(full);
      if (it == nodes.end()) {
        continue;
      }
      const auto w = wrong_hash.find(full);
      sums[rel] = w != wrong_hash.end() ? w->second : sha256_hex(it->second.content);
    }
    return std::unique_ptr<RemoteHashJob>(std::make_unique<Job>(RemoteHashes{"sha256sum", std::move(sums)}));
  }

  Result<std::unique_ptr<ExecStream>> open_exec(const std::string&, std::uint32_t = 0) override
  {
    return std::unexpected(Error{Errc::unsupported, "memory transport: no shell"});
  }

  Result<int> run_interactive(const std::string&, const InteractiveIo&) override
  {
    return std::unexpected(Error{Errc::unsupported, "memory transport: no shell"});
  }
};

}  // namespace gpurent::testing
