#pragma once
// What the bytes of one HTTP/1.1 request say about where it ends, watched as the request
// parser reads them: the head is bounded (bytes and lines) before anything else looks at
// it, and after the response the connection knows whether the request's body was read to
// its end. A request whose body was not read (an early 401, 413 or 429, a route that takes
// no body, a handler that stopped) leaves bytes that must never be parsed as the next
// request, so its connection closes.
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpufed::server {

class RequestFraming {
 public:
  RequestFraming(size_t max_head_bytes, size_t max_head_lines)
      : max_head_bytes_(max_head_bytes), max_head_lines_(max_head_lines) {}

  enum class Step { kHead, kHeadComplete, kHeadTooLarge, kBody };
  // Starts a new request.
  void Reset();
  // Accounts for bytes handed to the parser. Returns how many of them belong to the head
  // (the rest are body) and what the request's state is after them.
  Step Deliver(const char* data, size_t size, size_t& head_bytes);

  bool head_complete() const { return head_complete_; }
  // After the head: the body has been read to its declared end (no body counts as read).
  // A chunked body is never known to be complete here, so it ends the connection too.
  bool body_fully_read() const;

 private:
  void ParseHead();

  size_t max_head_bytes_, max_head_lines_;
  std::string head_;
  size_t head_lines_ = 0;
  bool head_complete_ = false;
  bool chunked_or_unknown_ = false;  // Transfer-Encoding, or a Content-Length we cannot read
  uint64_t declared_length_ = 0;
  uint64_t body_read_ = 0;
};

}  // namespace gpufed::server
