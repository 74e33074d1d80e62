// SPDX-License-Identifier: MIT
#pragma once
// A test session that hands every call to a real one (an sshd_fixture connection); a test
// overrides only what it changes: the round trip it reports, the streams it damages.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sync/transport.hpp"

namespace gpurent::testing {

class ForwardingSession : public SshSession {
public:
  explicit ForwardingSession(std::unique_ptr<SshSession> inner) : m_inner(std::move(inner)) {}
  LinkTimes link_times() const override { return m_inner->link_times(); }
  std::string host_key_fingerprint() const override { return m_inner->host_key_fingerprint(); }
  Result<ExecResult> exec(const std::string& c, std::string_view in) override { return m_inner->exec(c, in); }
  Result<std::vector<RemoteEntry>> list_tree(const std::string& root) override { return m_inner->list_tree(root); }
  Result<RemoteEntry> stat(const std::string& path) override { return m_inner->stat(path); }
  Result<std::uint64_t> read_file(const std::string& path, std::uint64_t offset, const DataSink& sink) override
  {
    return m_inner->read_file(path, offset, sink);
  }
  Result<StreamReport> stream_files(const std::string& root, const std::vector<std::string>& rels, FileStreamHandler& h) override
  {
    return m_inner->stream_files(root, rels, h);
  }
  Result<std::unique_ptr<BackupChannel>> open_backup_channel(const std::string& root) override { return m_inner->open_backup_channel(root); }
  Result<std::unique_ptr<RemoteHashJob>> start_sha256(const std::string& root, const std::vector<std::string>& rels) override
  {
    return m_inner->start_sha256(root, rels);
  }
  Result<std::unique_ptr<ExecStream>> open_exec(const std::string& command, std::uint32_t window = 0) override
  {
    return m_inner->open_exec(command, window);
  }
  Result<int> run_interactive(const std::string& c, const InteractiveIo& io) override { return m_inner->run_interactive(c, io); }

protected:
  [[nodiscard]] SshSession& inner() { return *m_inner; }

private:
  std::unique_ptr<SshSession> m_inner;
};

}  // namespace gpurent::testing
