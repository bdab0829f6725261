#include "controller/store/sql_portability.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace gpufed::store {
namespace {

struct Token {
  enum class Kind { kWord, kNumber, kParam, kPunct };
  Kind kind;
  std::string text;  // words upper-cased
};

bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Status Refuse(std::string_view sql, const std::string& why) {
  return InvalidArgument("not portable SQL (" + why + "): " + std::string(sql.substr(0, 200)));
}

// Words, numbers, `$n` and punctuation, without literals and comments; rules 1 and 2.
Result<std::vector<Token>> Tokenize(std::string_view sql) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
    } else if (c == '\'') {  // a literal; '' is a quote inside it
      for (++i; i < sql.size(); ++i) {
        if (sql[i] == '\'' && (i + 1 >= sql.size() || sql[i + 1] != '\'')) break;
        if (sql[i] == '\'') ++i;
      }
      ++i;
    } else if (c == '-' && next == '-') {
      i = std::min(sql.size(), sql.find('\n', i));
    } else if (c == '/' && next == '*') {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '"' || c == '`' || c == '[') {
      return Refuse(sql, std::string("a name quoted with ") + c + " (rule 2)");
    } else if (c == '?' || c == '@' || (c == ':' && (next == ':' || IsWordChar(next)))) {
      return Refuse(sql, std::string("placeholder or cast ") + c + next + " (rule 1: $n only)");
    } else if (c == '$') {
      size_t end = i + 1;
      while (end < sql.size() && IsDigit(sql[end])) ++end;
      if (end == i + 1 || next == '0' || (end < sql.size() && IsWordChar(sql[end]))) {
        return Refuse(sql, "a $ placeholder that is not $n (rule 1)");
      }
      out.push_back({Token::Kind::kParam, std::string(sql.substr(i, end - i))});
      i = end;
    } else if (IsWordStart(c)) {
      size_t end = i;
      while (end < sql.size() && IsWordChar(sql[end])) ++end;
      std::string word(sql.substr(i, end - i));
      std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return std::toupper(ch); });
      out.push_back({Token::Kind::kWord, std::move(word)});
      i = end;
    } else if (IsDigit(c)) {
      size_t end = i;
      while (end < sql.size() && (IsDigit(sql[end]) || sql[end] == '.')) ++end;
      out.push_back({Token::Kind::kNumber, std::string(sql.substr(i, end - i))});
      i = end;
    } else {
      out.push_back({Token::Kind::kPunct, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

bool Is(const std::vector<Token>& t, size_t i, std::string_view text) { return i < t.size() && t[i].text == text; }

// Rules 3, 5 and 6: words one engine alone takes.
Status CheckWords(std::string_view sql, const std::vector<Token>& t) {
  static const std::set<std::string, std::less<>> kSqliteOnly = {"PRAGMA", "INDEXED", "AUTOINCREMENT", "GLOB",
                                                                 "IFNULL", "IIF",     "GROUP_CONCAT",  "ATTACH",
                                                                 "DETACH", "VACUUM",  "_ROWID_",       "OID"};
  static const std::set<std::string, std::less<>> kSqliteFunctions = {"LAST_INSERT_ROWID", "CHANGES",  "TOTAL_CHANGES",
                                                                      "STRFTIME",          "DATETIME", "JULIANDAY",
                                                                      "UNIXEPOCH",         "DATE",     "TIME"};
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != Token::Kind::kWord) continue;
    const std::string& w = t[i].text;
    const bool called = Is(t, i + 1, "(");
    if (kSqliteOnly.count(w) > 0) return Refuse(sql, w + " is SQLite's (rule 3)");
    if (called && (kSqliteFunctions.count(w) > 0 || w.rfind("JSON", 0) == 0)) {
      return Refuse(sql, w + "() is SQLite's (rule 3)");
    }
    if (w == "INSERT" && Is(t, i + 1, "OR")) return Refuse(sql, "INSERT OR is SQLite's: use ON CONFLICT (rule 3)");
    if (w == "REPLACE" && !called) return Refuse(sql, "REPLACE is SQLite's: use ON CONFLICT (rule 3)");
    if (w == "BEGIN" && (Is(t, i + 1, "IMMEDIATE") || Is(t, i + 1, "EXCLUSIVE") || Is(t, i + 1, "DEFERRED"))) {
      return Refuse(sql, "BEGIN " + t[i + 1].text + " is SQLite's (rule 3)");
    }
    if (w == "IS") {
      const size_t operand = Is(t, i + 1, "NOT") ? i + 2 : i + 1;
      if (!Is(t, operand, "NULL") && !Is(t, operand, "TRUE") && !Is(t, operand, "FALSE") &&
          !Is(t, operand, "DISTINCT")) {
        return Refuse(sql, "IS [NOT] compares values only in SQLite: use IS [NOT] DISTINCT FROM (rule 5)");
      }
    }
    if (w == "LIMIT" && Is(t, i + 2, ",")) return Refuse(sql, "LIMIT m, n is SQLite's: LIMIT n OFFSET m (rule 6)");
  }
  return Status::Ok();
}

// Rule 4: rowid only over the tables that will have a column of that name.
Status CheckRowid(std::string_view sql, const std::vector<Token>& t) {
  if (std::none_of(t.begin(), t.end(), [](const Token& k) { return k.text == "ROWID"; })) return Status::Ok();
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (!Is(t, i, "FROM") && !Is(t, i, "INTO") && !Is(t, i, "UPDATE") && !Is(t, i, "JOIN")) continue;
    if (t[i + 1].kind != Token::Kind::kWord) continue;  // a subquery
    std::string table = t[i + 1].text;
    std::transform(table.begin(), table.end(), table.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (std::find(kTablesWithRowidColumn.begin(), kTablesWithRowidColumn.end(), table) ==
        kTablesWithRowidColumn.end()) {
      return Refuse(sql, "rowid over " + table + ", which has no rowid column in PostgreSQL (rule 4)");
    }
  }
  return Status::Ok();
}

// Rule 7: in DO UPDATE, every column that is not an assignment's target is qualified.
Status CheckUpsertColumns(std::string_view sql, const std::vector<Token>& t) {
  static const std::set<std::string, std::less<>> kExpressionWords = {
      "AND",     "OR",   "NOT", "NULL",   "IS",      "IN",       "CASE",   "WHEN",
      "THEN",    "ELSE", "END", "TRUE",   "FALSE",   "DISTINCT", "FROM",   "LIKE",
      "BETWEEN", "CAST", "AS",  "BIGINT", "INTEGER", "TEXT",     "DOUBLE", "PRECISION"};
  size_t i = 0;
  while (i + 2 < t.size() && !(Is(t, i, "DO") && Is(t, i + 1, "UPDATE") && Is(t, i + 2, "SET"))) ++i;
  if (i + 2 >= t.size()) return Status::Ok();
  bool in_where = false;
  bool expect_target = true;
  int depth = 0;
  for (i += 3; i < t.size(); ++i) {
    const Token& k = t[i];
    if (k.text == "(") ++depth;
    if (k.text == ")") --depth;
    if (depth == 0 && k.text == "RETURNING") break;
    if (depth == 0 && k.text == "WHERE") in_where = true;
    if (depth == 0 && k.text == "," && !in_where) expect_target = true;
    if (k.kind != Token::Kind::kWord || k.text == "WHERE" || kExpressionWords.count(k.text) > 0) continue;
    if (expect_target && !in_where) {  // the column SET assigns
      expect_target = false;
      continue;
    }
    const bool qualified = Is(t, i + 1, ".") || (i > 0 && Is(t, i - 1, "."));
    if (!qualified && !Is(t, i + 1, "(")) {
      return Refuse(sql, "unqualified column " + k.text + " in DO UPDATE: name its table or excluded. (rule 7)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckPortableSql(std::string_view sql) {
  Result<std::vector<Token>> tokens = Tokenize(sql);
  if (!tokens.ok()) return tokens.status();
  GPUFED_RETURN_IF_ERROR(CheckWords(sql, *tokens));
  GPUFED_RETURN_IF_ERROR(CheckRowid(sql, *tokens));
  return CheckUpsertColumns(sql, *tokens);
}

}  // namespace gpufed::store
