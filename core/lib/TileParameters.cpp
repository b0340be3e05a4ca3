//===- TileParameters.cpp - tile sizes given from outside -----------------===//
//
// One pass over the text, aware of `//` comments and string literals (what
// they hold is copied as it is): at each `tk.func @name<...>` the
// declaration is read and blanked, and each `${NAME}` after it, up to the
// next tk.func, becomes the parameter's value.
//
//===----------------------------------------------------------------------===//

#include "tk/core/TileParameters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>
#include <optional>

using namespace llvm;

namespace {

bool isIdentifierStart(char c) { return isAlpha(c) || c == '_'; }
bool isIdentifierChar(char c) { return isAlnum(c) || c == '_'; }

class Expander {
public:
  Expander(StringRef text, ArrayRef<std::pair<std::string, int64_t>> values,
           std::string &out, std::vector<tk::TileParameter> &parameters,
           std::string &error)
      : text(text), values(values), out(out), parameters(parameters),
        error(error) {}

  LogicalResult run();

private:
  LogicalResult fail(size_t at, const Twine &message) {
    StringRef before = text.take_front(at);
    size_t line = before.count('\n') + 1;
    size_t lineStart = before.rfind('\n');
    size_t column = lineStart == StringRef::npos ? at + 1 : at - lineStart;
    error = (Twine(line) + ":" + Twine(column) + ": " + message).str();
    return failure();
  }
  void skipSpaces() {
    while (pos < text.size() && isSpace(text[pos]))
      ++pos;
  }
  StringRef identifier() {
    size_t start = pos;
    if (pos < text.size() && isIdentifierStart(text[pos]))
      while (pos < text.size() && isIdentifierChar(text[pos]))
        ++pos;
    return text.slice(start, pos);
  }
  /// Copies the text from `from` to `pos` into the output.
  void copyFrom(size_t from) { out += text.slice(from, pos).str(); }
  /// At `tk.func`: copies through the symbol, then reads and blanks the
  /// declaration.
  LogicalResult readKernel();
  LogicalResult readDeclaration(StringRef kernel);
  LogicalResult substitute();

  StringRef text;
  ArrayRef<std::pair<std::string, int64_t>> values;
  std::string &out;
  std::vector<tk::TileParameter> &parameters;
  std::string &error;
  size_t pos = 0;
  /// The parameters of the kernel being read: [kernelStart, end).
  size_t kernelStart = 0;
  std::optional<std::string> kernel;
};

} // namespace

LogicalResult Expander::run() {
  while (pos < text.size()) {
    char c = text[pos];
    size_t start = pos;
    if (text.substr(pos).starts_with("//")) {
      pos = std::min(text.find('\n', pos), text.size());
      copyFrom(start);
    } else if (c == '"') {
      ++pos;
      while (pos < text.size() && text[pos] != '"' && text[pos] != '\n')
        pos += text[pos] == '\\' ? 2 : 1;
      pos = std::min(pos + 1, text.size());
      copyFrom(start);
    } else if (text.substr(pos).starts_with("tk.func") &&
               (pos == 0 || !isIdentifierChar(text[pos - 1])) &&
               (pos + 7 == text.size() || !isIdentifierChar(text[pos + 7]))) {
      if (failed(readKernel()))
        return failure();
    } else if (text.substr(pos).starts_with("${")) {
      if (failed(substitute()))
        return failure();
    } else {
      out += c;
      ++pos;
    }
  }
  return success();
}

LogicalResult Expander::readKernel() {
  size_t start = pos;
  pos += 7;
  skipSpaces();
  if (pos >= text.size() || text[pos] != '@')
    return fail(pos, "expected '@' and the kernel's name after tk.func");
  ++pos;
  std::string name;
  if (pos < text.size() && text[pos] == '"') {
    size_t close = text.find('"', pos + 1);
    if (close == StringRef::npos)
      return fail(pos, "the kernel's quoted name is not closed");
    name = text.slice(pos + 1, close).str();
    pos = close + 1;
  } else {
    size_t nameStart = pos;
    while (pos < text.size() && (isIdentifierChar(text[pos]) ||
                                 text[pos] == '$' || text[pos] == '.'))
      ++pos;
    name = text.slice(nameStart, pos).str();
  }
  if (name.empty())
    return fail(pos, "expected the kernel's name after '@'");
  copyFrom(start);
  kernel = name;
  kernelStart = parameters.size();
  size_t afterName = pos;
  skipSpaces();
  if (pos < text.size() && text[pos] == '<')
    return readDeclaration(name);
  pos = afterName;
  return success();
}

LogicalResult Expander::readDeclaration(StringRef kernelName) {
  size_t open = pos;
  ++pos;
  while (true) {
    skipSpaces();
    size_t nameAt = pos;
    StringRef name = identifier();
    if (name.empty())
      return fail(nameAt, "expected a tile parameter's name in the "
                          "declaration of tk.func @" +
                              kernelName + " (as in <BLOCK: i32 = 1024>)");
    for (size_t i = kernelStart; i < parameters.size(); ++i)
      if (parameters[i].name == name)
        return fail(nameAt, "tile parameter '" + name +
                                "' is declared twice in tk.func @" +
                                kernelName);
    skipSpaces();
    if (pos >= text.size() || text[pos] != ':')
      return fail(pos, "expected ':' and a type (i32 or i64) after tile "
                       "parameter '" +
                           name + "'");
    ++pos;
    skipSpaces();
    size_t typeAt = pos;
    StringRef type = identifier();
    if (type != "i32" && type != "i64")
      return fail(typeAt, "tile parameter '" + name +
                              "' must be i32 or i64, not '" + type + "'");
    skipSpaces();
    std::optional<int64_t> value;
    if (pos < text.size() && text[pos] == '=') {
      ++pos;
      skipSpaces();
      size_t valueAt = pos;
      if (pos < text.size() && text[pos] == '-')
        ++pos;
      while (pos < text.size() && isAlnum(text[pos]))
        ++pos;
      int64_t parsed = 0;
      if (text.slice(valueAt, pos).getAsInteger(0, parsed))
        return fail(valueAt, "the default of tile parameter '" + name +
                                 "' must be a whole number");
      value = parsed;
    }
    for (const auto &[given, givenValue] : values)
      if (given == name)
        value = givenValue;
    if (!value)
      return fail(nameAt, "tile parameter '" + name + "' of tk.func @" +
                              kernelName +
                              " has no default and no constexpr gives it "
                              "a value");
    int64_t low = type == "i32" ? std::numeric_limits<int32_t>::min()
                                : std::numeric_limits<int64_t>::min();
    int64_t high = type == "i32" ? std::numeric_limits<int32_t>::max()
                                 : std::numeric_limits<int64_t>::max();
    if (*value < low || *value > high)
      return fail(nameAt, "tile parameter '" + name + "' is " + type +
                              "; the value " + Twine(*value) + " does not fit");
    parameters.push_back({kernelName.str(), name.str(), type.str(), *value});
    skipSpaces();
    if (pos < text.size() && text[pos] == ',') {
      ++pos;
      continue;
    }
    if (pos < text.size() && text[pos] == '>') {
      ++pos;
      break;
    }
    return fail(pos, "expected ',' or '>' in the tile parameters of "
                     "tk.func @" +
                         kernelName);
  }
  // Blanked, newlines kept: the lines below keep their numbers.
  for (char c : text.slice(open, pos))
    out += c == '\n' ? '\n' : ' ';
  return success();
}

LogicalResult Expander::substitute() {
  size_t at = pos;
  pos += 2;
  StringRef name = identifier();
  if (name.empty() || pos >= text.size() || text[pos] != '}')
    return fail(at, "expected '${NAME}', NAME a tile parameter");
  ++pos;
  if (!kernel)
    return fail(at, "'${" + name + "}' is outside every tk.func");
  for (size_t i = kernelStart; i < parameters.size(); ++i)
    if (parameters[i].name == name) {
      out += std::to_string(parameters[i].value);
      return success();
    }
  std::string declared;
  for (size_t i = kernelStart; i < parameters.size(); ++i)
    declared += (declared.empty() ? "" : ", ") + parameters[i].name;
  return fail(
      at, "'${" + name + "}' is not a tile parameter of tk.func @" + *kernel +
              " (it declares " +
              (declared.empty()
                   ? std::string("none; declare it as "
                                 "@" +
                                 *kernel + "<" + name.str() + ": i32 = ...>")
                   : declared) +
              ")");
}

LogicalResult tk::expandTileParameters(
    StringRef text, ArrayRef<std::pair<std::string, int64_t>> values,
    std::string &expanded, std::vector<TileParameter> &parameters,
    std::string &error) {
  expanded.clear();
  parameters.clear();
  expanded.reserve(text.size());
  return Expander(text, values, expanded, parameters, error).run();
}
