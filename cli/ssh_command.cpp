// SPDX-License-Identifier: MIT
// `gpurent ssh (NAME | --host USER@HOST[:PORT]) [-- CMD...]`: a shell with a PTY, or a command
// whose stdout/stderr pass through and whose exit status becomes gpurent's.
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

struct SshCommandOptions {
  // CLI11 2.1 does not append words after `--` to a positional list that already took a word
  // before it (`ssh NAME -- ls` failed), so NAME and the command are two positionals; with
  // --host the first word of the command lands in `name` and is moved back.
  std::string name;
  std::vector<std::string> command;
  SshFlags ssh;
};

// Puts the local terminal in raw mode for the lifetime of the object.
class RawTerminal {
public:
  explicit RawTerminal(int fd) : m_fd(fd)
  {
    if (::tcgetattr(fd, &m_saved) == 0) {
      termios raw = m_saved;
      ::cfmakeraw(&raw);
      m_active = ::tcsetattr(fd, TCSAFLUSH, &raw) == 0;
    }
  }
  ~RawTerminal()
  {
    if (m_active) {
      ::tcsetattr(m_fd, TCSAFLUSH, &m_saved);
    }
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

private:
  int m_fd;
  termios m_saved{};
  bool m_active = false;
};

std::pair<int, int> window_size()
{
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return {ws.ws_col, ws.ws_row};
  }
  return {80, 24};
}

Result<int> run(Services& s, SshCommandOptions& o)
{
  TRY_ASSIGN(SshOptions options, make_ssh_options(s, o.ssh));
  std::string name = o.name;
  std::vector<std::string> cmd = o.command;
  if (!o.ssh.host.empty() && !name.empty()) {
    cmd.insert(cmd.begin(), name);
    name.clear();
  }
  TRY_ASSIGN(const SshDestination dest, resolve_destination(s, name, o.ssh, options));
  TRY_ASSIGN(auto session, connect_ssh(s, dest.target, options));
  // One argument is a shell command line as typed (ssh host 'ls -l | wc'); several are quoted words.
  const std::string command = cmd.empty() ? std::string() : command_line_text(cmd);
  s.out.flush();
  std::cout.flush();
  InteractiveIo io;
  io.pty = command.empty() && s.stdin_tty;
  if (const auto term = s.getenv("TERM")) {
    io.term = *term;
  }
  io.window_size = window_size;
  if (io.pty) {
    RawTerminal raw(STDIN_FILENO);
    return session->run_interactive(command, io);
  }
  return session->run_interactive(command, io);
}

}  // namespace

void add_ssh_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<SshCommandOptions>();
  auto* sub = app.add_subcommand("ssh", "a shell or a command on a server, checking its recorded host key");
  sub->add_option("name", opts->name, "NAME of a tracked server (omit with --host)");
  sub->add_option("command", opts->command, "after --, the command to run (none: an interactive shell)");
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    auto r = run(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
