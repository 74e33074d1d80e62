// SPDX-License-Identifier: MIT
// The TarEngine (sync/tar_stream.hpp) over libarchive. Part of the IO module; the only file that
// includes libarchive's headers.
//
// Reading: libarchive pulls its input through a read callback, while the channel pushes bytes as
// they arrive. So the archive is read on a thread of its own, and feed() hands it a buffer at a
// time (pieces collected up to 1 MiB, a larger piece as it is): the thread's read callback returns
// that buffer and the handover returns once libarchive asks for the next one, or has finished.
// The two never run at once, so the handler is called as if from feed() or flush().
//
// Writing: gnutar format with blocking off (bytes per block 0), so libarchive hands each header,
// padding and data write to the callback as it happens, data at the caller's own address.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "sync/tar_stream.hpp"

namespace gpurent {
namespace {

struct ArchiveReadFree {
  void operator()(archive* a) const noexcept { archive_read_free(a); }
};
struct ArchiveWriteFree {
  void operator()(archive* a) const noexcept { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const noexcept { archive_entry_free(e); }
};

// ARCHIVE_OK, or ARCHIVE_WARN (done, with a remark); ARCHIVE_RETRY, FAILED and FATAL are not.
constexpr bool archive_ok(int r) noexcept { return r == ARCHIVE_OK || r == ARCHIVE_WARN; }

std::string archive_message(archive* a, const char* fallback)
{
  const char* why = archive_error_string(a);
  return std::string("tar stream: ") + (why != nullptr && *why != '\0' ? why : fallback);
}

// feed() collects small pieces up to this before it hands them over: each handover costs two
// thread wake-ups (~65 us on a 2-core VM), which at the channel's 32 KiB reads halved the speed.
constexpr std::size_t k_batch = std::size_t{1} << 20;
// Bytes of the stream before the current buffer that libarchive may not have consumed when it
// finds the end of the archive (it reads ahead at most a header's worth).
constexpr std::size_t k_history = k_tar_record;
constexpr std::size_t k_zeros = 64 * 1024;

class LibarchiveReader final : public TarStreamReader {
public:
  LibarchiveReader(FileStreamHandler& handler, std::size_t keep_after_end) : m_handler(handler), m_after_end_limit(keep_after_end) {}
  LibarchiveReader(const LibarchiveReader&) = delete;
  LibarchiveReader& operator=(const LibarchiveReader&) = delete;

  ~LibarchiveReader() override
  {
    if (m_thread.joinable()) {
      {
        const std::lock_guard lock(m_mutex);
        m_cancel = true;
      }
      m_cv.notify_all();
      m_thread.join();
    }
  }

  Result<void> feed(const char* data, std::size_t size) override
  {
    if (size == 0) {
      return {};
    }
    if (m_done) {
      return after_done(data, size);
    }
    if (m_batch.size() + size > k_batch) {
      TRY(flush());  // the batch never grows past k_batch
      if (m_done) {
        return after_done(data, size);
      }
    }
    if (size >= k_batch) {
      return hand_over(data, size);  // large enough on its own: no copy
    }
    if (m_batch.capacity() < k_batch) {
      m_batch.reserve(k_batch);
    }
    m_batch.append(data, size);
    return m_batch.size() == k_batch ? flush() : Result<void>{};
  }

  Result<void> flush() override
  {
    if (m_done || m_batch.empty()) {
      return m_error ? std::unexpected(*m_error) : Result<void>{};
    }
    auto r = hand_over(m_batch.data(), m_batch.size());
    m_batch.clear();  // libarchive has given it back (or finished, keeping what followed the archive)
    return r;
  }

  bool finished() const noexcept override { return m_finished; }
  const std::string& after_end() const noexcept override { return m_after_end; }
  bool after_end_truncated() const noexcept override { return m_after_end_truncated; }

private:
  // Gives libarchive's thread one buffer and waits until it asks for the next one or finishes.
  Result<void> hand_over(const char* data, std::size_t size)
  {
    if (!m_thread.joinable()) {
      m_thread = std::thread([this] { run(); });
    }
    std::unique_lock lock(m_mutex);
    if (m_done) {
      return after_done(data, size);
    }
    m_in_data = data;
    m_in_size = size;
    m_in_ready = true;
    m_cv.notify_all();
    m_cv.wait(lock, [this] { return m_done || (!m_in_ready && !m_in_busy); });
    m_in_ready = false;
    if (m_error) {
      return std::unexpected(*m_error);
    }
    return {};
  }

  // feed() after the thread finished: after the archive, keep what follows; after an error, repeat it.
  Result<void> after_done(const char* data, std::size_t size)
  {
    if (m_error) {
      return std::unexpected(*m_error);
    }
    keep_after(data, size);
    return {};
  }

  void keep_after(const char* data, std::size_t size)
  {
    const std::size_t room = m_after_end_limit - std::min(m_after_end_limit, m_after_end.size());
    m_after_end.append(data, std::min(size, room));
    m_after_end_truncated = m_after_end_truncated || size > room;
  }

  static la_ssize_t on_read(archive* a, void* self, const void** buffer)
  {
    return static_cast<LibarchiveReader*>(self)->next_buffer(a, buffer);
  }

  // On the thread: gives back the previous buffer, then waits for the next one.
  la_ssize_t next_buffer(archive* a, const void** buffer)
  {
    std::unique_lock lock(m_mutex);
    if (m_in_busy) {
      release_current();
      m_cv.notify_all();
    }
    m_cv.wait(lock, [this] { return m_cancel || m_in_ready; });
    if (m_cancel) {
      archive_set_error(a, ECANCELED, "stopped");
      return -1;
    }
    m_in_ready = false;
    m_in_busy = true;
    *buffer = m_in_data;
    return static_cast<la_ssize_t>(m_in_size);
  }

  // Under the lock: libarchive is done with the current buffer but for what it copied.
  void release_current()
  {
    const std::size_t tail = std::min(m_in_size, k_history);
    m_history.append(m_in_data + m_in_size - tail, tail);
    if (m_history.size() > 2 * k_history) {
      m_history.erase(0, m_history.size() - k_history);
    }
    m_cur_start += m_in_size;
    m_in_busy = false;
  }

  void run() noexcept
  {
    Result<void> r;
    std::unique_ptr<archive, ArchiveReadFree> a(archive_read_new());
    try {
      if (!a) {
        r = fail(Errc::internal, "tar stream: out of memory");
      } else if (archive_read_support_format_tar(a.get()) != ARCHIVE_OK ||
                 archive_read_open(a.get(), this, nullptr, &on_read, nullptr) != ARCHIVE_OK) {
        r = fail(Errc::invalid_input, archive_message(a.get(), "not a tar archive"));
      } else {
        r = read_members(a.get());  // the handler's own errors (a full disk, an interrupt) as they are
      }
    } catch (const std::exception& e) {
      r = fail(Errc::internal, std::string("tar stream: ") + e.what());
    } catch (...) {
      r = fail(Errc::internal, "tar stream: unknown error");
    }
    const std::lock_guard lock(m_mutex);
    if (r && !m_cancel) {
      keep_rest(archive_filter_bytes(a.get(), 0));
      m_finished = true;
    } else {
      m_error = r ? Error{Errc::internal, "tar stream: stopped"} : r.error();
    }
    m_done = true;
    m_in_busy = false;
    m_cv.notify_all();
  }

  // Under the lock, at the end of the archive, while libarchive holds the buffer m_in_data: what
  // was fed after byte `consumed` is after_end.
  void keep_rest(la_int64_t consumed)
  {
    const auto at = static_cast<std::uint64_t>(std::max<la_int64_t>(consumed, 0));
    if (at < m_cur_start) {
      const auto back = static_cast<std::size_t>(std::min<std::uint64_t>(m_cur_start - at, m_history.size()));
      keep_after(m_history.data() + m_history.size() - back, back);
      keep_after(m_in_data, m_in_size);
    } else if (at - m_cur_start < m_in_size) {
      const auto skip = static_cast<std::size_t>(at - m_cur_start);
      keep_after(m_in_data + skip, m_in_size - skip);
    }
  }

  Result<void> read_members(archive* a)
  {
    while (true) {
      archive_entry* entry = nullptr;
      const int r = archive_read_next_header(a, &entry);
      if (r == ARCHIVE_EOF) {
        return {};
      }
      if (!archive_ok(r)) {  // ARCHIVE_RETRY (a damaged header) included: the stream is not to be trusted
        return fail(Errc::invalid_input, archive_message(a, "a damaged header"));
      }
      if (archive_entry_filetype(entry) != AE_IFREG || archive_entry_hardlink(entry) != nullptr) {
        continue;  // directories, links, devices: their data (if any) is skipped by the next header
      }
      const char* name = archive_entry_pathname(entry);
      if (name == nullptr) {
        name = archive_entry_pathname_utf8(entry);
      }
      if (name == nullptr || !archive_entry_size_is_set(entry) || archive_entry_size(entry) < 0) {
        return fail(Errc::invalid_input, "tar stream: a member without a readable name or size");
      }
      TRY(read_file(a, name, static_cast<std::uint64_t>(archive_entry_size(entry))));
    }
  }

  Result<void> read_file(archive* a, const std::string& name, std::uint64_t size)
  {
    TRY(m_handler.begin_file(name, size));
    std::uint64_t at = 0;
    while (true) {
      const void* block = nullptr;
      std::size_t length = 0;
      la_int64_t offset = 0;
      const int r = archive_read_data_block(a, &block, &length, &offset);
      if (r == ARCHIVE_EOF) {
        break;
      }
      if (!archive_ok(r)) {
        return fail(Errc::invalid_input, archive_message(a, "a damaged member"));
      }
      const auto start = static_cast<std::uint64_t>(std::max<la_int64_t>(offset, 0));
      if (start < at || start > size || length > size - start) {
        return fail(Errc::invalid_input, "tar stream: a member's data lies outside its size");
      }
      TRY(zeros(start - at));  // a hole of a sparse member
      if (length > 0) {
        TRY(m_handler.file_data(static_cast<const char*>(block), length));
      }
      at = start + length;
    }
    TRY(zeros(size - at));
    return m_handler.end_file();
  }

  Result<void> zeros(std::uint64_t count)
  {
    static const std::string k_block(k_zeros, '\0');
    while (count > 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count, k_zeros));
      TRY(m_handler.file_data(k_block.data(), n));
      count -= n;
    }
    return {};
  }

  FileStreamHandler& m_handler;
  std::size_t m_after_end_limit;
  std::string m_batch;  // fed, not yet handed over
  std::thread m_thread;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  // The buffer hand_over() offers (m_in_ready) and libarchive then reads (m_in_busy), at stream
  // offset m_cur_start.
  const char* m_in_data = nullptr;
  std::size_t m_in_size = 0;
  bool m_in_ready = false;
  bool m_in_busy = false;
  std::uint64_t m_cur_start = 0;
  std::string m_history;  // the last bytes of the buffers before the current one
  bool m_cancel = false;
  bool m_done = false;
  bool m_finished = false;
  std::optional<Error> m_error;
  std::string m_after_end;
  bool m_after_end_truncated = false;
};

class LibarchiveWriter final : public TarStreamWriter {
public:
  LibarchiveWriter() : m_archive(archive_write_new()), m_entry(archive_entry_new())
  {
    if (!m_archive || !m_entry || archive_write_set_format_gnutar(m_archive.get()) != ARCHIVE_OK ||
        archive_write_set_bytes_per_block(m_archive.get(), 0) != ARCHIVE_OK ||
        archive_write_open2(m_archive.get(), this, nullptr, &on_write, nullptr, nullptr) != ARCHIVE_OK) {
      m_broken = m_archive ? archive_message(m_archive.get(), "cannot start the archive") : "tar stream: out of memory";
    }
  }
  LibarchiveWriter(const LibarchiveWriter&) = delete;
  LibarchiveWriter& operator=(const LibarchiveWriter&) = delete;

  // Freed first, while the members its write callback touches still live (an unfinished archive's
  // end blocks go nowhere).
  ~LibarchiveWriter() override { m_archive.reset(); }

  Result<void> begin_member(const TarMember& m, std::string& out) override
  {
    TRY(usable());
    archive_entry* e = m_entry.get();
    archive_entry_clear(e);
    archive_entry_copy_pathname(e, m.path.c_str());
    const auto perm = static_cast<mode_t>(m.mode & 07777U);
    switch (m.kind) {
    case EntryKind::directory:
      archive_entry_set_mode(e, AE_IFDIR | perm);
      archive_entry_set_size(e, 0);
      break;
    case EntryKind::symlink:
      archive_entry_set_mode(e, AE_IFLNK | perm);
      archive_entry_copy_symlink(e, m.link_target.c_str());
      archive_entry_set_size(e, 0);
      break;
    default:
      archive_entry_set_mode(e, AE_IFREG | perm);
      archive_entry_set_size(e, static_cast<la_int64_t>(m.size));
      break;
    }
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_mtime(e, std::max<std::int64_t>(m.mtime_s, 0), 0);
    m_left = m.kind == EntryKind::file ? m.size : 0;
    return write_to(out, [&] { return archive_write_header(m_archive.get(), e); });
  }

  Result<void> member_data(const char* data, std::size_t size) override
  {
    TRY(usable());
    if (size > m_left) {
      return fail(Errc::internal, "tar stream: more data than the member's size");
    }
    m_in_place = data;
    m_in_place_size = size;
    m_in_place_seen = 0;
    const la_ssize_t n = archive_write_data(m_archive.get(), data, size);
    m_in_place = nullptr;
    if (n < 0 || static_cast<std::size_t>(n) != size || m_in_place_seen != size || m_stray) {
      return broken(n < 0 ? archive_message(m_archive.get(), "cannot write data") : "tar stream: the archive library did not pass the data through");
    }
    m_left -= size;
    return {};
  }

  Result<void> end_member(std::string& out) override
  {
    TRY(usable());
    if (m_left != 0) {
      return fail(Errc::internal, "tar stream: a member ended before its size");
    }
    return write_to(out, [&] { return archive_write_finish_entry(m_archive.get()); });
  }

  Result<void> finish(std::string& out) override
  {
    TRY(usable());
    TRY(write_to(out, [&] { return archive_write_close(m_archive.get()); }));
    // Blocking is off, so libarchive does not pad the last record as GNU tar does.
    out.append(static_cast<std::size_t>((k_tar_record - m_written % k_tar_record) % k_tar_record), '\0');
    m_broken = "tar stream: the archive is finished";
    return {};
  }

private:
  static la_ssize_t on_write(archive* /*a*/, void* self, const void* buffer, std::size_t length)
  {
    auto* w = static_cast<LibarchiveWriter*>(self);
    const auto* p = static_cast<const char*>(buffer);
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const auto base = reinterpret_cast<std::uintptr_t>(w->m_in_place);
    w->m_written += length;
    if (w->m_in_place != nullptr && at >= base && length <= w->m_in_place_size && at - base <= w->m_in_place_size - length) {
      w->m_in_place_seen += length;
    } else if (w->m_out != nullptr) {
      w->m_out->append(p, length);
    } else {
      w->m_stray = true;
    }
    return static_cast<la_ssize_t>(length);
  }

  template <class Call>
  Result<void> write_to(std::string& out, Call call)
  {
    m_out = &out;
    const int r = call();
    m_out = nullptr;
    if (!archive_ok(r) || m_stray) {
      return broken(archive_message(m_archive.get(), "cannot write"));
    }
    return {};
  }

  Result<void> usable() const
  {
    if (!m_broken.empty()) {
      return fail(Errc::internal, m_broken);
    }
    return {};
  }

  Result<void> broken(std::string why)
  {
    m_broken = why;
    return fail(Errc::internal, std::move(why));
  }

  std::unique_ptr<archive, ArchiveWriteFree> m_archive;
  std::unique_ptr<archive_entry, EntryFree> m_entry;
  std::string* m_out = nullptr;
  const char* m_in_place = nullptr;
  std::size_t m_in_place_size = 0;
  std::size_t m_in_place_seen = 0;
  std::uint64_t m_left = 0;
  std::uint64_t m_written = 0;
  bool m_stray = false;
  std::string m_broken;
};

std::unique_ptr<TarStreamReader> make_reader(FileStreamHandler& handler, std::size_t keep_after_end)
{
  return std::make_unique<LibarchiveReader>(handler, keep_after_end);
}

std::unique_ptr<TarStreamWriter> make_writer() { return std::make_unique<LibarchiveWriter>(); }

constexpr TarEngine k_engine{&make_reader, &make_writer};

}  // namespace
}  // namespace gpurent

// Exported from the IO module; sync/tar_stream.cpp refers to it weakly.
extern "C" __attribute__((visibility("default"))) const void* gpurent_tar_engine() noexcept;
extern "C" __attribute__((visibility("default"))) const void* gpurent_tar_engine() noexcept
{
  return &gpurent::k_engine;
}
