// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "common/text.hpp"

using gpurent::locale_is_utf8;

TEST_CASE("locale_is_utf8: LC_ALL, then LC_CTYPE, then LANG, the codeset decides", "[common][text]")
{
  CHECK(locale_is_utf8("", "", "en_US.UTF-8"));
  CHECK(locale_is_utf8("", "", "C.utf8"));
  CHECK(locale_is_utf8("", "", "de_DE.utf-8@euro"));
  CHECK_FALSE(locale_is_utf8("", "", ""));       // nothing set: the C locale
  CHECK_FALSE(locale_is_utf8("", "", "C"));
  CHECK_FALSE(locale_is_utf8("", "", "POSIX"));
  CHECK_FALSE(locale_is_utf8("", "", "en_US.ISO-8859-1"));
  CHECK_FALSE(locale_is_utf8("", "", "en_US"));
  CHECK_FALSE(locale_is_utf8("C", "", "en_US.UTF-8"));
  CHECK(locale_is_utf8("", "C.UTF-8", "C"));
  CHECK_FALSE(locale_is_utf8("", "C", "C.UTF-8"));
  CHECK(gpurent::bar_glyphs(false).filled == "#");
  CHECK(gpurent::bar_glyphs(true).filled == "\u2588");
}
