# SPDX-License-Identifier: MIT
# gpurent_embed_text(TARGET FILE STEM FUNCTION): compiles FILE into TARGET as the text returned by
# `std::string_view gpurent::FUNCTION() noexcept`. The file is re-read when it changes (a configure
# dependency); the generated source is rewritten only when its content changes.
function(gpurent_embed_text target file stem function)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(READ ${file} text)
  string(FIND "${text}" ")gpurent_embed\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} holds the raw-string delimiter )gpurent_embed\"")
  endif()
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/${stem}.cpp)
  file(WRITE ${generated}.tmp
    "// Generated from ${file} by cmake/EmbedText.cmake; do not edit.\n"
    "#include <string_view>\n"
    "namespace gpurent {\n"
    "std::string_view ${function}() noexcept;\n"
    "std::string_view ${function}() noexcept\n{\n"
    "  static constexpr char k_text[] = R\"gpurent_embed(${text})gpurent_embed\";\n"
    "  return {k_text, sizeof k_text - 1};\n}\n"
    "}  // namespace gpurent\n")
  configure_file(${generated}.tmp ${generated} COPYONLY)
  target_sources(${target} PRIVATE ${generated})
endfunction()
