// SPDX-License-Identifier: MIT
// A g++ stand-in for libFuzzer's main(). The default test build links it into every fuzz target
// to replay the committed corpus and crash inputs (-runs=0, "fuzz: <target> replay" in ctest);
// scripts/fuzz.sh uses it to fuzz only where clang-19 is missing. It replays every input, then
// mutates the corpus (bit flips, inserts, deletions, duplications, splices, interesting bytes)
// until the time is up. It has no coverage guidance.
// A crashing input is written to <artifact_prefix>crash-<run> (and, when it came from a file,
// that file is named) before the process dies.
// Usage: fuzz_x [-max_total_time=S] [-seed=N] [-runs=N] [-max_len=N] [-artifact_prefix=DIR/] CORPUS...
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Input = std::vector<std::uint8_t>;

const Input* g_current = nullptr;
const char* g_current_file = nullptr;  // the file the input came from, when replaying
char g_crash_path[4096] = {};

// Async-signal-safe: only open/write/close on a path prepared before the run.
void dump_current()
{
  if (g_current == nullptr || g_crash_path[0] == '\0') {
    return;
  }
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    const auto* p = g_current->data();
    std::size_t left = g_current->size();
    while (left > 0) {
      const auto n = ::write(fd, p, left);
      if (n <= 0) {
        break;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    static const char msg[] = "\n==fuzz driver== crashing input written to ";
    (void)!::write(2, msg, sizeof(msg) - 1);
    (void)!::write(2, g_crash_path, std::strlen(g_crash_path));
    (void)!::write(2, "\n", 1);
  }
  if (g_current_file != nullptr) {
    static const char from[] = "==fuzz driver== the input is the file ";
    (void)!::write(2, from, sizeof(from) - 1);
    (void)!::write(2, g_current_file, std::strlen(g_current_file));
    (void)!::write(2, "\n", 1);
  }
}

void on_signal(int sig)
{
  dump_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void run(const Input& input, const std::string& prefix, std::uint64_t n, const char* file = nullptr)
{
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%scrash-%llu", prefix.c_str(), static_cast<unsigned long long>(n));
  g_current = &input;
  g_current_file = file;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
  g_current_file = nullptr;
}

void load(const std::filesystem::path& p, std::vector<Input>& corpus, std::vector<std::string>& names, std::size_t max_len)
{
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(p, ec)) {
      if (entry.is_regular_file(ec)) {
        load(entry.path(), corpus, names, max_len);
      }
    }
    return;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::cerr << "==fuzz driver== cannot read " << p.string() << "; skipped\n";
    return;
  }
  Input data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() > max_len) {
    data.resize(max_len);
  }
  corpus.push_back(std::move(data));
  names.push_back(p.string());
}

Input mutate(const std::vector<Input>& corpus, std::mt19937_64& rng, std::size_t max_len)
{
  static const std::uint8_t k_interesting[] = {0, 1, 0x7f, 0x80, 0xff, '\n', '\r', ' ', '\x1b', '[', ']', '(', ')', '.', ';',
                                               ':', '|', '-', '+', 'e', '9', '0', '#'};
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  Input x = corpus[pick(corpus.size())];
  const std::size_t rounds = 1 + pick(8);
  for (std::size_t r = 0; r < rounds; ++r) {
    switch (pick(7)) {
    case 0:
      if (!x.empty()) {
        x[pick(x.size())] ^= static_cast<std::uint8_t>(1U << pick(8));
      }
      break;
    case 1: x.insert(x.begin() + static_cast<std::ptrdiff_t>(pick(x.size() + 1)), k_interesting[pick(sizeof(k_interesting))]); break;
    case 2:
      if (!x.empty()) {
        const std::size_t at = pick(x.size());
        const std::size_t n = 1 + pick(std::min<std::size_t>(x.size() - at, 64));
        x.erase(x.begin() + static_cast<std::ptrdiff_t>(at), x.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
      break;
    case 3:
      if (!x.empty()) {
        const std::size_t at = pick(x.size());
        const std::size_t n = 1 + pick(std::min<std::size_t>(x.size() - at, 256));
        const Input piece(x.begin() + static_cast<std::ptrdiff_t>(at), x.begin() + static_cast<std::ptrdiff_t>(at + n));
        x.insert(x.begin() + static_cast<std::ptrdiff_t>(pick(x.size() + 1)), piece.begin(), piece.end());
      }
      break;
    case 4: {
      const Input& other = corpus[pick(corpus.size())];
      if (!other.empty()) {
        const std::size_t at = pick(other.size());
        const std::size_t n = 1 + pick(std::min<std::size_t>(other.size() - at, 512));
        x.insert(x.begin() + static_cast<std::ptrdiff_t>(pick(x.size() + 1)), other.begin() + static_cast<std::ptrdiff_t>(at),
                 other.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
      break;
    }
    case 5:
      if (!x.empty()) {
        x[pick(x.size())] = k_interesting[pick(sizeof(k_interesting))];
      }
      break;
    default:
      if (!x.empty()) {
        x.resize(pick(x.size()));
      }
      break;
    }
  }
  if (x.size() > max_len) {
    x.resize(max_len);
  }
  return x;
}

std::uint64_t flag(const std::string& arg, const char* name, std::uint64_t fallback)
{
  const std::string key = std::string("-") + name + "=";
  return arg.rfind(key, 0) == 0 ? std::strtoull(arg.c_str() + key.size(), nullptr, 10) : fallback;
}

}  // namespace

int main(int argc, char** argv)
{
  std::uint64_t seconds = 30;
  std::uint64_t seed = 1;
  std::uint64_t max_runs = UINT64_MAX;
  std::size_t max_len = 64 * 1024;
  std::string prefix;
  std::vector<Input> corpus;
  std::vector<std::string> names;  // names[i]: the file corpus[i] was read from
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-artifact_prefix=", 0) == 0) {
      prefix = arg.substr(17);
    } else if (arg[0] == '-') {
      seconds = flag(arg, "max_total_time", seconds);
      seed = flag(arg, "seed", seed);
      max_runs = flag(arg, "runs", max_runs);
      max_len = static_cast<std::size_t>(flag(arg, "max_len", max_len));
    } else {
      paths.push_back(arg);
    }
  }
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(dump_current);
#endif
  std::signal(SIGABRT, on_signal);
  std::signal(SIGSEGV, on_signal);
  std::signal(SIGFPE, on_signal);
  std::signal(SIGILL, on_signal);
  for (const auto& p : paths) {
    // A missing input is an error, not an empty corpus: the replay test must not pass silently
    // when the corpus it was given (e.g. <build>/fuzz-corpus/<target>/) is not there.
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) {
      std::cerr << "==fuzz driver== no such input: " << p << "\n";
      return 1;
    }
    load(p, corpus, names, max_len);
  }
  std::uint64_t runs = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    run(corpus[i], prefix, runs++, names[i].c_str());
  }
  if (corpus.empty()) {
    corpus.push_back({});
  }
  std::cerr << "==fuzz driver== replayed " << names.size() << " inputs\n";
  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  while (runs < max_runs && std::chrono::steady_clock::now() < deadline) {
    Input x = mutate(corpus, rng, max_len);
    run(x, prefix, runs++);
    if (rng() % 64 == 0 && corpus.size() < 20000) {
      corpus.push_back(std::move(x));  // let mutations build on mutations
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "==fuzz driver== done: " << runs << " runs in " << elapsed << " s, corpus " << corpus.size() << ", no crash\n";
  return 0;
}
