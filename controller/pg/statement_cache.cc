#include "controller/pg/statement_cache.h"

namespace gpufed::pg {

const std::string* StatementCache::Find(const std::string& sql) {
  auto it = by_sql_.find(sql);
  if (it == by_sql_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return &it->second.name;
}

std::string StatementCache::NextName() { return "gpufed_" + std::to_string(++next_); }

std::vector<std::string> StatementCache::Insert(const std::string& sql, std::string name) {
  std::vector<std::string> evicted;
  if (auto it = by_sql_.find(sql); it != by_sql_.end()) {
    // Prepared again under a new name (the old one was lost): the old name goes.
    evicted.push_back(std::move(it->second.name));
    lru_.erase(it->second.lru);
    by_sql_.erase(it);
  }
  lru_.push_front(sql);
  by_sql_.emplace(sql, Entry{std::move(name), lru_.begin()});
  while (by_sql_.size() > capacity_) {
    auto oldest = by_sql_.find(lru_.back());
    evicted.push_back(std::move(oldest->second.name));
    by_sql_.erase(oldest);
    lru_.pop_back();
  }
  return evicted;
}

void StatementCache::Clear() {
  lru_.clear();
  by_sql_.clear();
}

}  // namespace gpufed::pg
