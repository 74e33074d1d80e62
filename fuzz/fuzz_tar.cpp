// SPDX-License-Identifier: MIT
// Fuzz target for the tar reader (sync/tar_stream.hpp: libarchive driven through gpurent's own
// wrapper, which feeds it from a thread of its own) that the backup reads a server's
// `tar -cf -` through: any bytes, in any chunking, give the same files (names, sizes, contents)
// or the same error, every file gets exactly its declared size between begin_file and end_file,
// what follows the archive stays within its limit; never a crash, a hang or a sanitizer report.
// The first byte seeds the chunk sizes; the rest is the stream.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sync/tar_stream.hpp"

namespace {

struct File {
  std::string name;
  std::uint64_t size = 0;
  std::string data;
  bool ended = false;
  bool operator==(const File&) const = default;
};

// Records what the reader hands over and checks the handler protocol as it goes.
struct Recorder final : gpurent::FileStreamHandler {
  std::vector<File> files;
  gpurent::Result<void> begin_file(const std::string& rel_path, std::uint64_t size) override
  {
    if (!files.empty() && !files.back().ended) {
      std::abort();  // a new file before the previous one ended
    }
    files.push_back(File{rel_path, size, {}, false});
    return {};
  }
  gpurent::Result<void> file_data(const char* data, std::size_t size) override
  {
    if (files.empty() || files.back().ended || size == 0) {
      std::abort();  // data outside a file, or an empty piece
    }
    auto& f = files.back();
    f.data.append(data, size);
    if (f.data.size() > f.size) {
      std::abort();  // more data than the header declared
    }
    return {};
  }
  gpurent::Result<void> end_file() override
  {
    if (files.empty() || files.back().ended || files.back().data.size() != files.back().size) {
      std::abort();  // an end without a begin, or a file cut short
    }
    files.back().ended = true;
    return {};
  }
};

struct Outcome {
  bool ok = true;
  std::string error;
  bool finished = false;
  std::string after_end;
  bool truncated = false;
};

constexpr std::size_t k_after_end_limit = 700;

Outcome read(std::string_view text, unsigned seed, bool whole, Recorder& rec)
{
  const auto reader = gpurent::tar_engine().make_reader(rec, k_after_end_limit);
  Outcome o;
  std::size_t pos = 0;
  std::uint32_t state = 2654435761U * (seed + 1U);
  while (pos < text.size()) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const std::size_t n = whole ? text.size() : std::min<std::size_t>(1 + state % 700, text.size() - pos);
    const auto r = reader->feed(text.data() + pos, n);
    pos += n;
    if (!r) {
      o.ok = false;
      o.error = r.error().message;
      break;
    }
  }
  if (o.ok) {
    const auto r = reader->flush();
    if (!r) {
      o.ok = false;
      o.error = r.error().message;
    }
  }
  o.finished = reader->finished();
  o.after_end = reader->after_end();
  o.truncated = reader->after_end_truncated();
  if (o.after_end.size() > k_after_end_limit) {
    std::abort();
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  Recorder a;
  const Outcome whole = read(text, data[0], true, a);
  Recorder b;
  const Outcome pieces = read(text, data[0], false, b);
  if (whole.ok != pieces.ok || whole.error != pieces.error || whole.finished != pieces.finished ||
      whole.after_end != pieces.after_end || whole.truncated != pieces.truncated ||
      a.files != b.files) {
    std::abort();  // the chunking changed what was read
  }
  if (!whole.ok && whole.error.empty()) {
    std::abort();
  }
  return 0;
}
