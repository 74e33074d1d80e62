// SPDX-License-Identifier: MIT
#pragma once
// One error type shared by every layer; Result<T> at every boundary that can fail.
#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <utility>

namespace gpurent {

enum class Errc {
  invalid_input,  // bad user input, malformed file or response
  not_found,
  unauthorized,
  quota,          // rate limited / out of capacity (may carry retry_after)
  unavailable,    // network or server trouble, retryable
  timeout,
  unsupported,    // the provider or engine lacks this feature (message says why)
  usage,          // command-line misuse (exit 2)
  refused,        // refused for safety or does not fit (exit 3)
  partial,        // some of the work failed (exit 4)
  internal,
};

struct Error {
  Errc code = Errc::internal;
  std::string message;
  std::optional<std::chrono::seconds> retry_after = {};
  // The request never left this machine (the host did not resolve, the connection or the TLS
  // handshake failed): whatever it asked for cannot have happened at the other end.
  bool not_sent = false;
  // The user interrupted it (SIGINT, SIGTERM or SIGHUP) at a point where it stopped cleanly.
  bool interrupted = false;
};

template <class T>
using Result = std::expected<T, Error>;

// What a step the user interrupted (SIGINT, SIGTERM, SIGHUP) ends with: `what` says what it was
// doing. Exit 4 (partial): what was done so far stands, and the command says what is left.
[[nodiscard]] inline Error interrupted_error(std::string what)
{
  Error e{Errc::partial, "interrupted: " + std::move(what)};
  e.interrupted = true;
  return e;
}

[[nodiscard]] inline std::unexpected<Error> fail(Errc code, std::string message)
{
  return std::unexpected<Error>(Error{code, std::move(message)});
}

// Exit codes of the contract: 0 ok, 1 error, 2 usage (and malformed input), 3 refused/does not fit/the provider or
// card does not have that (unsupported), 4 partial.
[[nodiscard]] constexpr int exit_code_for(Errc code) noexcept
{
  switch (code) {
  case Errc::usage:
  case Errc::invalid_input: return 2;  // JSON code "usage": a value, file or config the user gave is malformed
  case Errc::refused:
  case Errc::unsupported: return 3;
  case Errc::partial: return 4;
  default: return 1;
  }
}

[[nodiscard]] constexpr bool is_retryable(const Error& e) noexcept
{
  return e.code == Errc::unavailable || e.code == Errc::timeout ||
         (e.code == Errc::quota && e.retry_after.has_value());
}

}  // namespace gpurent

// TRY(expr): evaluate a Result<void>/Result<T>; on error return it from the enclosing function.
#define GPURENT_CONCAT_INNER(a, b) a##b
#define GPURENT_CONCAT(a, b) GPURENT_CONCAT_INNER(a, b)
#define TRY(expr)                                                               \
  do {                                                                          \
    auto&& gpurent_try_result_ = (expr);                                        \
    if (!gpurent_try_result_) {                                                 \
      return std::unexpected<::gpurent::Error>(std::move(gpurent_try_result_).error()); \
    }                                                                           \
  } while (false)
// TRY_ASSIGN(var, expr): declare `var` from the value of a Result<T>, or return its error.
#define TRY_ASSIGN(var, expr)                                                   \
  auto GPURENT_CONCAT(gpurent_tmp_, __LINE__) = (expr);                         \
  if (!GPURENT_CONCAT(gpurent_tmp_, __LINE__)) {                                \
    return std::unexpected<::gpurent::Error>(std::move(GPURENT_CONCAT(gpurent_tmp_, __LINE__)).error()); \
  }                                                                             \
  var = std::move(*GPURENT_CONCAT(gpurent_tmp_, __LINE__))
