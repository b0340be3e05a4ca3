//===- TileParametersTest.cpp - tk::expandTileParameters ------------------===//
//
// The text a kernel with tile parameters becomes: values from constexprs or
// defaults, the declaration blanked with its lines kept, comments and strings
// untouched, each kernel's `${NAME}` its own, and every malformed input an
// error at its line and column.
//
//===----------------------------------------------------------------------===//

#include "tk/core/TileParameters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using ::testing::HasSubstr;

namespace {

struct Expansion {
  bool ok = false;
  std::string text, error;
  std::vector<tk::TileParameter> parameters;
};

Expansion expand(llvm::StringRef text,
                 std::vector<std::pair<std::string, int64_t>> values = {}) {
  Expansion result;
  result.ok = succeeded(tk::expandTileParameters(
      text, values, result.text, result.parameters, result.error));
  return result;
}

TEST(TileParameters, DefaultsFillTheTypesAndTheDeclarationIsBlanked) {
  Expansion e = expand("tk.func @add<BLOCK: i32 = 1024>(%x: i32) {\n"
                       "  %r = tk.make_range {start = 0 : i32, end = ${BLOCK} "
                       ": i32} : tensor<${BLOCK}xi32>\n");
  ASSERT_TRUE(e.ok) << e.error;
  EXPECT_EQ(e.text, "tk.func @add                   (%x: i32) {\n"
                    "  %r = tk.make_range {start = 0 : i32, end = 1024 : "
                    "i32} : tensor<1024xi32>\n");
  ASSERT_EQ(e.parameters.size(), 1u);
  EXPECT_EQ(e.parameters[0].kernel, "add");
  EXPECT_EQ(e.parameters[0].name, "BLOCK");
  EXPECT_EQ(e.parameters[0].type, "i32");
  EXPECT_EQ(e.parameters[0].value, 1024);
}

TEST(TileParameters, ConstexprsOverrideDefaultsAndFillTheRest) {
  Expansion e =
      expand("tk.func @mm<BM: i32 = 64, BN: i32,\n    BK: i64 = 32>() "
             "{ ${BM}x${BN}x${BK} }",
             {{"BN", 128}, {"BM", 16}});
  ASSERT_TRUE(e.ok) << e.error;
  // The newline inside the declaration stays: line numbers do not move.
  EXPECT_EQ(e.text, "tk.func @mm" + std::string(23, ' ') + "\n" +
                        std::string(17, ' ') + "() { 16x128x32 }");
  ASSERT_EQ(e.parameters.size(), 3u);
  EXPECT_EQ(e.parameters[2].type, "i64");
}

TEST(TileParameters, EachKernelHasItsOwn) {
  Expansion e = expand("tk.func @a<N: i32 = 4>() { ${N} }\n"
                       "tk.func @b<N: i32 = 8, M: i32 = 2>() { ${N}${M} }\n"
                       "tk.func @c() { }");
  ASSERT_TRUE(e.ok) << e.error;
  EXPECT_THAT(e.text, HasSubstr("{ 4 }"));
  EXPECT_THAT(e.text, HasSubstr("{ 82 }"));
  EXPECT_EQ(e.parameters.size(), 3u);
}

TEST(TileParameters, CommentsStringsAndPlainTextAreLeftAlone) {
  std::string text = "// tk.func @x<Q: i32 = 1> ${Q}\n"
                     "tk.func @k() { tk.print \"${NOT} <a>\" }\n"
                     "tk.func @\"quoted\"(%a: tensor<4xi32>) {}";
  Expansion e = expand(text);
  ASSERT_TRUE(e.ok) << e.error;
  EXPECT_EQ(e.text, text);
  EXPECT_TRUE(e.parameters.empty());
}

TEST(TileParameters, ErrorsNameTheirLineAndColumn) {
  Expansion undeclared =
      expand("tk.func @k<B: i32 = 4>() {\n  tensor<${C}xf32>\n}");
  EXPECT_FALSE(undeclared.ok);
  EXPECT_EQ(undeclared.error, "2:10: '${C}' is not a tile parameter of "
                              "tk.func @k (it declares B)");
  Expansion none = expand("tk.func @k() { ${C} }");
  EXPECT_THAT(none.error,
              HasSubstr("1:16: '${C}' is not a tile parameter of tk.func @k "
                        "(it declares none; declare it as @k<C: i32 = ...>)"));
  EXPECT_THAT(expand("tk.func @k<B: i32>() {}").error,
              HasSubstr("1:12: tile parameter 'B' of tk.func @k has no "
                        "default and no constexpr gives it a value"));
  EXPECT_THAT(expand("tk.func @k<B: f32 = 1>() {}").error,
              HasSubstr("1:15: tile parameter 'B' must be i32 or i64, not "
                        "'f32'"));
  EXPECT_THAT(expand("tk.func @k<B: i32 = 1, B: i32 = 2>() {}").error,
              HasSubstr("1:24: tile parameter 'B' is declared twice"));
  EXPECT_THAT(
      expand("tk.func @k<B: i32 = 1>() {}", {{"B", int64_t(1) << 40}}).error,
      HasSubstr("tile parameter 'B' is i32; the value 1099511627776 "
                "does not fit"));
  EXPECT_THAT(expand("tk.func @k<B: i32 = x1>() {}").error,
              HasSubstr("1:21: the default of tile parameter 'B' must be a "
                        "whole number"));
  EXPECT_THAT(expand("tk.func @k<B: i32 = 1 C: i32>() {}").error,
              HasSubstr("1:23: expected ',' or '>'"));
  EXPECT_THAT(expand("${B}").error,
              HasSubstr("1:1: '${B}' is outside every tk.func"));
  EXPECT_THAT(expand("tk.func @k() { ${ B} }").error,
              HasSubstr("1:16: expected '${NAME}'"));
}

} // namespace
