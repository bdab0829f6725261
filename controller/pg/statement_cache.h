#pragma once
// Which SQL texts a connection has prepared on its server, under which names, and which to
// let go when there are too many. Only bookkeeping: Connection sends the PQprepare and the
// DEALLOCATE. Names are never reused within one connection, so a statement the cache has
// forgotten (a DEALLOCATE that did not run) can never be mistaken for another.
#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpufed::pg {

class StatementCache {
 public:
  explicit StatementCache(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The name `sql` is prepared under, now the most recently used; nullptr when it is not.
  const std::string* Find(const std::string& sql);
  // A fresh name for a statement about to be prepared ("gpufed_1", "gpufed_2", ...).
  std::string NextName();
  // Records `sql` as prepared under `name`. Returns the names of the least recently used
  // statements past the capacity, forgotten here: the caller deallocates them.
  std::vector<std::string> Insert(const std::string& sql, std::string name);
  // Forgets every statement (the server no longer holds them: DISCARD ALL, DEALLOCATE ALL).
  void Clear();
  size_t size() const { return by_sql_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::string name;
    std::list<std::string>::iterator lru;  // position in lru_ (front: most recent)
  };
  size_t capacity_;
  uint64_t next_ = 0;
  std::list<std::string> lru_;  // SQL texts, most recently used first
  std::unordered_map<std::string, Entry> by_sql_;
};

}  // namespace gpufed::pg
