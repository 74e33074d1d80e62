// SPDX-License-Identifier: MIT
// Text from elsewhere printed on a terminal (common/terminal_text.hpp): control characters come
// out as escapes, everything else as it was.
#include <catch2/catch.hpp>

#include "common/terminal_text.hpp"

using gpurent::escape_controls;

TEST_CASE("escape_controls: C0, DEL and C1 controls are written out", "[common][terminal_text]")
{
  CHECK(escape_controls("\x1b[2J\x1b]0;pwned\x07 done") == "\\x1b[2J\\x1b]0;pwned\\x07 done");
  CHECK(escape_controls("over\rwrite") == "over\\x0dwrite");
  CHECK(escape_controls(std::string("nul\0byte", 8)) == "nul\\x00byte");
  CHECK(escape_controls("del\x7f") == "del\\x7f");
  CHECK(escape_controls("csi \xc2\x9b" "31m") == "csi \\u009b31m");  // U+009B, the 8-bit CSI
  CHECK(escape_controls("raw \x9b" "31m") == "raw \\x9b31m");        // not UTF-8: the byte
}

TEST_CASE("escape_controls: newline and tab stay in multi-line text unless asked", "[common][terminal_text]")
{
  CHECK(escape_controls("a\n\tb") == "a\n\tb");
  CHECK(escape_controls("a\n\tb", false) == "a\\x0a\\x09b");
}

TEST_CASE("escape_controls: printable text and UTF-8 are left alone", "[common][terminal_text]")
{
  CHECK(escape_controls("RunPod: Invalid Pod ID. (HTTP 400)") == "RunPod: Invalid Pod ID. (HTTP 400)");
  CHECK(escape_controls("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \\x1b") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \\x1b");
  CHECK(escape_controls("\xc0\xaf") == "\\xc0\\xaf");          // overlong: not UTF-8
  CHECK(escape_controls("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate: not UTF-8
  CHECK(escape_controls("cut \xe2\x82") == "cut \\xe2\\x82");    // a sequence cut short
}
