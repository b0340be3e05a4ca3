//===- Report.cpp - the matrix as text, Markdown, JSON and HTML -----------===//
//
// Every report groups cells by kernel (rows, in suite order) and backend
// (columns); a matrix cell summarises its dtype x shape sub-cells by status.
// The HTML page is self-contained (inline style, no script) so that CI can
// publish it as a single artifact.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

using namespace tk::conformance;

namespace {

/// Statuses from the most to the least alarming: a matrix cell shows the
/// first one present.
const CellStatus kSeverity[] = {CellStatus::Fail, CellStatus::XFail,
                                CellStatus::NoDevice, CellStatus::Unsupported,
                                CellStatus::Pass};

struct Matrix {
  std::vector<std::string> kernels;
  std::vector<std::string> backends;
  /// (kernel, backend) -> the sub-cells, in run order.
  std::map<std::pair<std::string, std::string>, std::vector<const CellResult *>>
      cells;
};

Matrix group(const std::vector<CellResult> &results) {
  Matrix m;
  for (const CellResult &r : results) {
    if (!llvm::is_contained(m.kernels, r.kernel))
      m.kernels.push_back(r.kernel);
    if (!llvm::is_contained(m.backends, r.backend))
      m.backends.push_back(r.backend);
    m.cells[{r.kernel, r.backend}].push_back(&r);
  }
  return m;
}

/// "PASS 12/12", or "FAIL 2/12, PASS 10" when statuses are mixed.
std::string summarize(const std::vector<const CellResult *> &cells,
                      CellStatus *worst = nullptr) {
  if (cells.empty())
    return "-";
  std::string text;
  bool first = true;
  for (CellStatus status : kSeverity) {
    size_t count = llvm::count_if(
        cells, [&](const CellResult *c) { return c->status == status; });
    if (!count)
      continue;
    if (first && worst)
      *worst = status;
    text += first
                ? std::string(statusName(status)) + " " +
                      std::to_string(count) + "/" + std::to_string(cells.size())
                : std::string(", ") + statusName(status) + " " +
                      std::to_string(count);
    first = false;
  }
  return text;
}

/// The dtypes of a kernel's cells, in order ("f32 f16 bf16").
std::string dtypesOf(const Matrix &m, const std::string &kernel) {
  std::vector<std::string> dtypes;
  for (const std::string &backend : m.backends) {
    auto it = m.cells.find({kernel, backend});
    if (it == m.cells.end())
      continue;
    for (const CellResult *c : it->second)
      if (!llvm::is_contained(dtypes, c->dtype))
        dtypes.push_back(c->dtype);
  }
  std::string text;
  for (const std::string &d : dtypes)
    text += (text.empty() ? "" : " ") + d;
  return text;
}

const std::vector<const CellResult *> &cellsOf(const Matrix &m,
                                               const std::string &kernel,
                                               const std::string &backend) {
  static const std::vector<const CellResult *> none;
  auto it = m.cells.find({kernel, backend});
  return it == m.cells.end() ? none : it->second;
}

std::string escapeJson(const std::string &text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(ch) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
        out += buf;
      } else {
        out += ch;
      }
    }
  }
  return out;
}

std::string escapeHtml(const std::string &text) {
  // LLVM's escaping of & < > " and '.
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printHTMLEscaped(text, os);
  return out;
}

/// Markdown table cells cannot hold '|' or newlines.
std::string escapeMarkdown(const std::string &text) {
  std::string out;
  for (char ch : text)
    out += ch == '|'    ? std::string("\\|")
           : ch == '\n' ? std::string(" ")
                        : std::string(1, ch);
  return out;
}

std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  return buf;
}

const char *cssClass(CellStatus status) {
  switch (status) {
  case CellStatus::Pass:
    return "pass";
  case CellStatus::Fail:
    return "fail";
  case CellStatus::Unsupported:
    return "unsupported";
  case CellStatus::NoDevice:
    return "nodevice";
  case CellStatus::XFail:
    return "xfail";
  }
  return "";
}

} // namespace

std::string
tk::conformance::formatTable(const std::vector<CellResult> &results) {
  Matrix m = group(results);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"kernel"});
  for (const std::string &b : m.backends)
    rows[0].push_back(b);
  for (const std::string &k : m.kernels) {
    std::vector<std::string> row = {k};
    for (const std::string &b : m.backends)
      row.push_back(summarize(cellsOf(m, k, b)));
    rows.push_back(row);
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  std::string text;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < rows[r].size(); ++i) {
      text += rows[r][i];
      if (i + 1 < rows[r].size())
        text += std::string(width[i] - rows[r][i].size() + 2, ' ');
    }
    text += "\n";
    if (r == 0) {
      for (size_t i = 0; i < width.size(); ++i)
        text += std::string(width[i], '-') + (i + 1 < width.size() ? "  " : "");
      text += "\n";
    }
  }
  return text;
}

std::string
tk::conformance::formatMarkdown(const std::vector<CellResult> &results) {
  Matrix m = group(results);
  std::string text = "| kernel | dtypes |";
  for (const std::string &b : m.backends)
    text += " " + b + " |";
  text += "\n| --- | --- |";
  for (size_t i = 0; i < m.backends.size(); ++i)
    text += " --- |";
  text += "\n";
  for (const std::string &k : m.kernels) {
    text += "| " + k + " | " + dtypesOf(m, k) + " |";
    for (const std::string &b : m.backends)
      text += " " + summarize(cellsOf(m, k, b)) + " |";
    text += "\n";
  }
  std::string notes;
  for (const CellResult &r : results)
    if (r.status != CellStatus::Pass)
      notes += "- `" + r.kernel + " " + r.dtype + " " + r.shape + " " +
               r.backend + "`: **" + statusName(r.status) + "** " +
               escapeMarkdown(r.message) + "\n";
  if (!notes.empty())
    text += "\nCells that did not pass:\n\n" + notes;
  return text;
}

std::string
tk::conformance::formatJson(const std::vector<CellResult> &results) {
  Matrix m = group(results);
  std::string text = "{\n  \"format\": \"tk-conformance/1\",\n";
  text += "  \"backends\": [";
  for (size_t i = 0; i < m.backends.size(); ++i)
    text +=
        (i ? ", " : "") + std::string("\"") + escapeJson(m.backends[i]) + "\"";
  text += "],\n  \"summary\": {";
  bool first = true;
  for (CellStatus status : kSeverity) {
    size_t count = llvm::count_if(
        results, [&](const CellResult &c) { return c.status == status; });
    text += std::string(first ? "" : ", ") + "\"" + statusName(status) +
            "\": " + std::to_string(count);
    first = false;
  }
  text += "},\n  \"cells\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const CellResult &r = results[i];
    text += "    {\"kernel\": \"" + escapeJson(r.kernel) + "\", \"dtype\": \"" +
            r.dtype + "\", \"shape\": \"" + escapeJson(r.shape) +
            "\", \"backend\": \"" + escapeJson(r.backend) +
            "\", \"status\": \"" + statusName(r.status) + "\"";
    if (!r.message.empty())
      text += ", \"message\": \"" + escapeJson(r.message) + "\"";
    if (r.status == CellStatus::Fail || r.status == CellStatus::XFail ||
        r.maxError > 0)
      text += ", \"max_error\": " + (std::isfinite(r.maxError)
                                         ? number(r.maxError)
                                         : std::string("\"inf\""));
    if (r.toleranceUsed > 0 && std::isfinite(r.toleranceUsed))
      text += ", \"tolerance_used\": " + number(r.toleranceUsed);
    if (r.firstMismatch >= 0)
      text += ", \"first_mismatch\": " + std::to_string(r.firstMismatch) +
              ", \"mismatch\": \"" + escapeJson(r.mismatch) + "\"";
    text += ", \"seconds\": " + number(r.seconds) + "}";
    text += i + 1 < results.size() ? ",\n" : "\n";
  }
  text += "  ]\n}\n";
  return text;
}

std::string
tk::conformance::formatHtml(const std::vector<CellResult> &results) {
  Matrix m = group(results);
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>tk conformance matrix</title>\n<style>\n"
      "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\n"
      "table{border-collapse:collapse}td,th{border:1px solid #bbb;"
      "padding:4px 8px;vertical-align:top;text-align:left}\n"
      "th{background:#eee}\n.pass{background:#c8f0c8}.fail{background:"
      "#f6b8b8}.xfail{background:#f8e0a0}.unsupported{background:#dde}"
      ".nodevice{background:#cde6f8}\n"
      "table.sub td{font-size:12px;padding:2px 4px}\n"
      "details summary{cursor:pointer}\npre{white-space:pre-wrap;margin:"
      "2px 0;font-size:12px}\n.legend span{padding:2px 8px;margin-right:"
      "6px}\n</style></head><body>\n<h1>tk conformance matrix</h1>\n"
      "<p class=\"legend\"><span class=\"pass\">PASS</span><span "
      "class=\"fail\">FAIL</span><span class=\"xfail\">XFAIL (known)</span>"
      "<span class=\"unsupported\">UNSUPPORTED (declared)</span><span "
      "class=\"nodevice\">NO_DEVICE (compiled and validated)</span></p>\n";
  h += "<table>\n<tr><th>kernel</th>";
  for (const std::string &b : m.backends)
    h += "<th>" + escapeHtml(b) + "</th>";
  h += "</tr>\n";
  for (const std::string &k : m.kernels) {
    h += "<tr><th>" + escapeHtml(k) + "</th>";
    for (const std::string &b : m.backends) {
      const std::vector<const CellResult *> &cells = cellsOf(m, k, b);
      CellStatus worst = CellStatus::Pass;
      std::string summary = summarize(cells, &worst);
      h += std::string("<td class=\"") + cssClass(worst) + "\"><details" +
           (worst == CellStatus::Fail ? " open" : "") + "><summary>" +
           escapeHtml(summary) + "</summary>\n";
      // Sub-cells: one row per dtype, one column per shape.
      std::vector<std::string> dtypes, shapes;
      for (const CellResult *c : cells) {
        if (!llvm::is_contained(dtypes, c->dtype))
          dtypes.push_back(c->dtype);
        if (!llvm::is_contained(shapes, c->shape))
          shapes.push_back(c->shape);
      }
      h += "<table class=\"sub\"><tr><th></th>";
      for (const std::string &s : shapes)
        h += "<th>" + escapeHtml(s) + "</th>";
      h += "</tr>\n";
      for (const std::string &d : dtypes) {
        h += "<tr><th>" + escapeHtml(d) + "</th>";
        for (const std::string &s : shapes) {
          const CellResult *cell = nullptr;
          for (const CellResult *c : cells)
            if (c->dtype == d && c->shape == s)
              cell = c;
          if (!cell) {
            h += "<td></td>";
            continue;
          }
          h += std::string("<td class=\"") + cssClass(cell->status) + "\">";
          if (cell->status == CellStatus::Pass) {
            h += "PASS";
          } else {
            h += std::string("<details><summary>") + statusName(cell->status) +
                 "</summary><pre>" + escapeHtml(cell->message);
            if (cell->status == CellStatus::Fail ||
                cell->status == CellStatus::XFail)
              h += "\nmax error: " + number(cell->maxError) +
                   "\nfirst mismatching index: " +
                   (cell->firstMismatch >= 0
                        ? std::to_string(cell->firstMismatch) + " (" +
                              escapeHtml(cell->mismatch) + ")"
                        : std::string("none (not a comparison failure)"));
            h += "</pre></details>";
          }
          h += "</td>";
        }
        h += "</tr>\n";
      }
      h += "</table></details></td>";
    }
    h += "</tr>\n";
  }
  h += "</table>\n</body></html>\n";
  return h;
}
