#pragma once
// The store's schema as an append-only list of migrations; the database's version
// (PRAGMA user_version) is the number applied. Never edit one that shipped: add the next.
#include <vector>

namespace gpufed::store {

const std::vector<const char*>& SchemaMigrations();

}  // namespace gpufed::store
