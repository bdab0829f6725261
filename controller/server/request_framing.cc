#include "controller/server/request_framing.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

namespace gpufed::server {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

void RequestFraming::Reset() {
  head_.clear();
  head_lines_ = 0;
  head_complete_ = false;
  chunked_or_unknown_ = false;
  declared_length_ = 0;
  body_read_ = 0;
}

RequestFraming::Step RequestFraming::Deliver(const char* data, size_t size, size_t& head_bytes) {
  head_bytes = 0;
  if (head_complete_) {
    body_read_ += size;
    return Step::kBody;
  }
  for (size_t i = 0; i < size; ++i) {
    head_.push_back(data[i]);
    ++head_bytes;
    if (head_.size() > max_head_bytes_) return Step::kHeadTooLarge;
    if (data[i] != '\n') continue;
    // A line ends. The parser (httplib) ends the head at a line that is exactly CRLF;
    // lines ending in a bare LF are skipped by it, and counted here like any other.
    const size_t line_start = head_.size() >= 2 ? head_.rfind('\n', head_.size() - 2) : std::string::npos;
    const size_t line_length = head_.size() - (line_start == std::string::npos ? 0 : line_start + 1);
    if (line_length == 2 && head_[head_.size() - 2] == '\r' && head_lines_ > 0) {
      head_complete_ = true;
      ParseHead();
      body_read_ = size - i - 1;
      return Step::kHeadComplete;
    }
    if (++head_lines_ > max_head_lines_) return Step::kHeadTooLarge;
  }
  return Step::kHead;
}

void RequestFraming::ParseHead() {
  bool length_seen = false;
  size_t pos = head_.find('\n');  // past the request line
  while (pos != std::string::npos && pos + 1 < head_.size()) {
    const size_t next = head_.find('\n', pos + 1);
    std::string_view line(head_.data() + pos + 1, (next == std::string::npos ? head_.size() : next) - pos - 1);
    pos = next;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = Lower(Trim(line.substr(0, colon)));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (name == "transfer-encoding") {
      chunked_or_unknown_ = true;
    } else if (name == "content-length") {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      const bool readable = !value.empty() && ec == std::errc() && end == value.data() + value.size();
      if (!readable || (length_seen && n != declared_length_)) chunked_or_unknown_ = true;
      declared_length_ = n;
      length_seen = true;
    }
  }
  head_.clear();
  head_.shrink_to_fit();
}

bool RequestFraming::body_fully_read() const {
  if (!head_complete_ || chunked_or_unknown_) return false;
  return body_read_ >= declared_length_;
}

}  // namespace gpufed::server
