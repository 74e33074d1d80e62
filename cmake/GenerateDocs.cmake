# SPDX-License-Identifier: MIT
# Writes the man page and the shell completions with the built binary (cli/CMakeLists.txt):
# cmake -DGPURENT=build/gpurent -DOUT=build/share -P GenerateDocs.cmake
cmake_minimum_required(VERSION 3.25)
set(outputs
  "man:man/man1/gpurent.1"
  "completion bash:bash-completion/completions/gpurent"
  "completion zsh:zsh/site-functions/_gpurent"
  "completion fish:fish/vendor_completions.d/gpurent.fish")
foreach(entry IN LISTS outputs)
  string(FIND "${entry}" ":" colon)
  string(SUBSTRING "${entry}" 0 ${colon} words)
  math(EXPR rest "${colon} + 1")
  string(SUBSTRING "${entry}" ${rest} -1 path)
  separate_arguments(args UNIX_COMMAND "${words}")
  get_filename_component(dir "${OUT}/${path}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  # A fixed environment: no user's config, no colour, the same text on every machine.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=GPURENT_CONFIG --unset=LANG --unset=LC_ALL NO_COLOR=1
                          "${GPURENT}" ${args}
    OUTPUT_FILE "${OUT}/${path}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gpurent ${words} failed (${rc})")
  endif()
endforeach()
