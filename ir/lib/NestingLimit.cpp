//===- NestingLimit.cpp - refusing IR text nested beyond what parses ------===//

#include "tk/ir/NestingLimit.h"

std::optional<size_t> tk::findNestingBeyond(llvm::StringRef text,
                                            unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '"': // A string literal, with its escapes.
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/': // A comment to the end of the line.
      if (i + 1 < e && text[i + 1] == '/')
        while (i < e && text[i] != '\n')
          ++i;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > limit)
        return i;
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-') // the arrow of a function type
        break;
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      // Unbalanced text is the parser's to report; only depth matters here.
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::pair<size_t, size_t> tk::lineAndColumnAt(llvm::StringRef text,
                                              size_t offset) {
  llvm::StringRef before = text.take_front(offset);
  // rfind gives npos on the first line: npos + 1 is column 0's offset, 0.
  return {before.count('\n') + 1, offset - (before.rfind('\n') + 1) + 1};
}
