// linkscope/core/mapped_file.hpp — read-only file bytes, mapped or read.
//
// `mapped_file::open(path)` gives the bytes of a regular file, read-only:
//   - files of at least `mmap_threshold` bytes are mapped (mmap PROT_READ,
//     MAP_PRIVATE; MapViewOfFile on Windows). Nothing is copied.
//   - smaller files are read() into an owned buffer. This is faster for the
//     many tiny objects of an archive closure, and it makes those files immune
//     to being truncated while mapped.
// A directory, FIFO, socket or device, an empty file, a missing or unreadable
// path each give an error; a FIFO is opened with O_NONBLOCK so it never hangs.
//
// Known limit (documented, not handled): if another process truncates a
// *mapped* file while linkscope reads it, the kernel raises SIGBUS on pages
// past the new end. Packaged inputs are not rewritten in place; callers that
// read files being written should copy them first or use `read_file`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <memory>
#include <utility>

#include "linkscope/core/bytes.hpp"
#include "linkscope/core/error.hpp"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace linkscope {
inline namespace v0 {

class mapped_file {
 public:
  static constexpr std::size_t mmap_threshold = 64 * 1024;

  mapped_file() = default;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  mapped_file(mapped_file&& other) noexcept { swap(other); }
  mapped_file& operator=(mapped_file&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }
  ~mapped_file() { reset(); }

  // Open `path` read-only. `force_read` never maps (used by tests and for
  // files that may change underneath).
  static result<mapped_file> open(const std::string& path, bool force_read = false);
  // What open(path) would say of the file (the same errors: missing,
  // unreadable, a directory, not regular, empty, too large) without reading
  // or mapping it: a cheap check of many paths.
  static result<void> probe(const std::string& path);

  const unsigned char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool is_mapped() const noexcept { return mapped_; }
  byte_view bytes() const& noexcept { return byte_view(data_, size_); }
  byte_view bytes() && = delete;  // the view would dangle
  // Device and inode (file index on Windows): the identity ld.so uses to
  // deduplicate libraries reached by different paths.
  std::uint64_t device() const noexcept { return device_; }
  std::uint64_t inode() const noexcept { return inode_; }

 private:
  void swap(mapped_file& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(mapped_, other.mapped_);
    std::swap(buffer_, other.buffer_);
    std::swap(device_, other.device_);
    std::swap(inode_, other.inode_);
  }
  void reset() noexcept;

  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  // A small file's bytes, read (not zeroed first: read() fills them).
  std::unique_ptr<unsigned char[]> buffer_;
  std::uint64_t device_ = 0;
  std::uint64_t inode_ = 0;
};

#if defined(_WIN32)

inline void mapped_file::reset() noexcept {
  if (mapped_ && data_ != nullptr) UnmapViewOfFile(data_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  buffer_.reset();
}

inline result<void> mapped_file::probe(const std::string& path) {
  auto opened = open(path);
  if (!opened) return opened.error();
  return ok();
}

inline result<mapped_file> mapped_file::open(const std::string& path, bool force_read) {
  (void)force_read;
  int wide_len = MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, nullptr, 0);
  if (wide_len <= 0) return make_error(errc::io_error, no_offset, "path is not valid UTF-8");
  std::wstring wide(static_cast<std::size_t>(wide_len), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, wide.data(), wide_len);
  DWORD attrs = GetFileAttributesW(wide.c_str());
  if (attrs == INVALID_FILE_ATTRIBUTES) return make_error(errc::not_found, no_offset, "no such file");
  if (attrs & FILE_ATTRIBUTE_DIRECTORY) return make_error(errc::is_directory, no_offset, "is a directory");
  HANDLE file = CreateFileW(wide.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                            nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return make_error(errc::io_error, no_offset, "cannot open file");
  if (GetFileType(file) != FILE_TYPE_DISK) {
    CloseHandle(file);
    return make_error(errc::not_regular, no_offset, "not a regular file");
  }
  BY_HANDLE_FILE_INFORMATION info{};
  GetFileInformationByHandle(file, &info);
  LARGE_INTEGER size{};
  if (!GetFileSizeEx(file, &size)) {
    CloseHandle(file);
    return make_error(errc::io_error, no_offset, "cannot stat file");
  }
  if (size.QuadPart == 0) {
    CloseHandle(file);
    return make_error(errc::empty_file, 0, "file is empty");
  }
  HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
  CloseHandle(file);
  if (mapping == nullptr) return make_error(errc::io_error, no_offset, "cannot map file");
  void* view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
  CloseHandle(mapping);
  if (view == nullptr) return make_error(errc::io_error, no_offset, "cannot map file");
  mapped_file out;
  out.data_ = static_cast<const unsigned char*>(view);
  out.size_ = static_cast<std::size_t>(size.QuadPart);
  out.mapped_ = true;
  out.device_ = info.dwVolumeSerialNumber;
  out.inode_ = (std::uint64_t{info.nFileIndexHigh} << 32) | info.nFileIndexLow;
  return out;
}

#else

inline void mapped_file::reset() noexcept {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  buffer_.reset();
}

namespace detail {
// open(2) and fstat(2) of `path` as mapped_file::open checks them: the open
// descriptor and its status, or the error open() gives.
inline result<int> open_regular(const std::string& path, struct ::stat& st) {
  if (path.empty()) return make_error(errc::not_found, no_offset, "empty path");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return make_error(errc::not_found, no_offset, "no such file");
    if (err == EACCES || err == EPERM) return make_error(errc::io_error, no_offset, "permission denied");
    if (err == ELOOP) return make_error(errc::io_error, no_offset, "too many levels of symbolic links");
    if (err == ENXIO) return make_error(errc::not_regular, no_offset, "not a regular file");
    return make_error(errc::io_error, no_offset, "cannot open file");
  }
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return make_error(errc::io_error, no_offset, "cannot stat file");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return make_error(errc::is_directory, no_offset, "is a directory");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(errc::not_regular, no_offset, "not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return make_error(errc::empty_file, 0, "file is empty");
  }
  if (static_cast<std::uint64_t>(st.st_size) > static_cast<std::uint64_t>(SIZE_MAX)) {
    ::close(fd);
    return make_error(errc::too_large, no_offset, "file larger than the address space");
  }
  return fd;
}
}  // namespace detail

inline result<void> mapped_file::probe(const std::string& path) {
  struct ::stat st {};
  auto fd = detail::open_regular(path, st);
  if (!fd) return fd.error();
  ::close(*fd);
  return ok();
}

inline result<mapped_file> mapped_file::open(const std::string& path, bool force_read) {
  struct ::stat st {};
  auto opened = detail::open_regular(path, st);
  if (!opened) return opened.error();
  const int fd = *opened;
  mapped_file out;
  out.device_ = static_cast<std::uint64_t>(st.st_dev);
  out.inode_ = static_cast<std::uint64_t>(st.st_ino);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (force_read || size < mmap_threshold) {
    out.buffer_.reset(new unsigned char[size]);
    std::size_t done = 0;
    while (done < size) {
      ssize_t got = ::read(fd, out.buffer_.get() + done, size - done);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) break;  // shrank underneath us: keep what we have
      done += static_cast<std::size_t>(got);
    }
    ::close(fd);
    if (done == 0) return make_error(errc::empty_file, 0, "file is empty");
    out.data_ = out.buffer_.get();
    out.size_ = done;
    return out;
  }
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (addr == MAP_FAILED) return make_error(errc::io_error, no_offset, "cannot map file");
  out.data_ = static_cast<const unsigned char*>(addr);
  out.size_ = size;
  out.mapped_ = true;
  return out;
}

#endif

}  // namespace v0
}  // namespace linkscope
