// A tiny FileCheck (after LLVM's), for checking printed IR such as
// graph::write_module_csv's output in tests:
//
//   EXPECT_TRUE(file_check(write_module_csv(g), R"(
//     CHECK: y,N,x,w,M
//     CHECK-NEXT: a,N,a.x1comm0,
//     CHECK-NOT: COLL
//   )"));
//
// Directives, one a line (blank lines are skipped; the pattern is the rest of
// the line with surrounding blanks trimmed, matched as a plain substring):
//   CHECK: p       p occurs after the previous match (on the same line after
//                  it, or on a later line)
//   CHECK-NEXT: p  p occurs on the line right after the previous match's
//   CHECK-SAME: p  p occurs on the previous match's line, after it
//   CHECK-NOT: p   p does not occur between the previous match and the next
//                  CHECK/CHECK-NEXT/CHECK-SAME match (after the last
//                  positive directive: until the end of the text)
// A failure names the directive (its line in `checks`), what went wrong and
// where the search started, followed by the whole text with line numbers.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stg_test {

namespace filecheck_detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// 1-based line number of byte offset `pos` of `text`.
inline size_t line_of(const std::string& text, size_t pos) {
  size_t line = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

inline std::string numbered(const std::string& text) {
  std::string out;
  size_t line = 1, start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    const std::string_view row =
        std::string_view(text).substr(start, end == std::string::npos ? end : end - start);
    if (end == std::string::npos && row.empty()) break;
    out += std::to_string(line++) + ": " + std::string(row) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

struct Directive {
  enum Kind { kCheck, kNext, kSame, kNot } kind;
  std::string pattern;
  size_t line;  // in `checks`
  std::string source;
};

}  // namespace filecheck_detail

inline ::testing::AssertionResult file_check(const std::string& text, const std::string& checks) {
  using filecheck_detail::Directive;
  auto fail = [&](const Directive* d, const std::string& why, size_t from) {
    ::testing::AssertionResult r = ::testing::AssertionFailure();
    if (d) r << "check line " << d->line << " '" << d->source << "': ";
    r << why;
    if (d) r << " (searching from text line " << filecheck_detail::line_of(text, from) << ")";
    return r << "\n--- text ---\n" << filecheck_detail::numbered(text) << "--- end ---";
  };

  // Parse the directives.
  std::vector<Directive> directives;
  static const struct {
    const char* prefix;
    Directive::Kind kind;
  } kPrefixes[] = {{"CHECK:", Directive::kCheck},
                   {"CHECK-NEXT:", Directive::kNext},
                   {"CHECK-SAME:", Directive::kSame},
                   {"CHECK-NOT:", Directive::kNot}};
  size_t check_line = 0, start = 0;
  while (start <= checks.size()) {
    size_t end = checks.find('\n', start);
    if (end == std::string::npos) end = checks.size();
    const std::string_view row =
        filecheck_detail::trim(std::string_view(checks).substr(start, end - start));
    ++check_line;
    start = end + 1;
    if (row.empty()) continue;
    bool known = false;
    for (const auto& p : kPrefixes) {
      const std::string_view prefix = p.prefix;
      if (row.substr(0, prefix.size()) != prefix) continue;
      const std::string_view pattern = filecheck_detail::trim(row.substr(prefix.size()));
      Directive d{p.kind, std::string(pattern), check_line, std::string(row)};
      if (pattern.empty()) return fail(&d, "empty pattern", 0);
      directives.push_back(std::move(d));
      known = true;
      break;
    }
    if (!known)
      return fail(nullptr,
                  "check line " + std::to_string(check_line) + " '" + std::string(row) +
                      "' is not a CHECK, CHECK-NEXT, CHECK-SAME or CHECK-NOT directive",
                  0);
  }
  if (directives.empty()) return fail(nullptr, "no directives", 0);

  // Match them. `pos`: end of the previous match; `matched`: whether there is one.
  size_t pos = 0;
  bool matched = false;
  std::vector<const Directive*> pending_not;
  auto check_nots = [&](size_t from, size_t to) -> const Directive* {
    for (const Directive* d : pending_not) {
      const size_t at = text.find(d->pattern, from);
      if (at != std::string::npos && at + d->pattern.size() <= to) return d;
    }
    return nullptr;
  };
  auto line_end = [&](size_t at) {
    const size_t e = text.find('\n', at);
    return e == std::string::npos ? text.size() : e;
  };
  for (const Directive& d : directives) {
    size_t from = pos, limit = text.size();
    switch (d.kind) {
      case Directive::kNot:
        pending_not.push_back(&d);
        continue;
      case Directive::kCheck:
        break;
      case Directive::kSame:
        if (!matched) return fail(&d, "CHECK-SAME without a previous match", pos);
        limit = line_end(pos);
        break;
      case Directive::kNext: {
        if (!matched) return fail(&d, "CHECK-NEXT without a previous match", pos);
        const size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) return fail(&d, "no line after the previous match", pos);
        from = nl + 1;
        limit = line_end(from);
        break;
      }
    }
    const size_t at = text.find(d.pattern, from);
    if (at == std::string::npos || at + d.pattern.size() > limit) {
      const char* where = d.kind == Directive::kCheck  ? "not found"
                          : d.kind == Directive::kNext ? "not found on the next line"
                                                       : "not found on the same line";
      return fail(&d, where, from);
    }
    if (const Directive* bad = check_nots(pos, at))
      return fail(bad,
                  "found before '" + d.source + "' (matched on text line " +
                      std::to_string(filecheck_detail::line_of(text, at)) + ")",
                  pos);
    pending_not.clear();
    pos = at + d.pattern.size();
    matched = true;
  }
  if (const Directive* bad = check_nots(pos, text.size()))
    return fail(bad, "found after the last match", pos);
  return ::testing::AssertionSuccess();
}

}  // namespace stg_test
