# cmake/dsmm_flags.cmake: warning, sanitizer and coverage flags as an INTERFACE target
# (dsmm_warnings) linked privately by every dsmm target; nothing edits CMAKE_C_FLAGS.
add_library(dsmm_warnings INTERFACE)
target_compile_options(dsmm_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wvla>)
if(DSMM_WERROR)
  target_compile_options(dsmm_warnings INTERFACE $<$<COMPILE_LANGUAGE:C>:-Werror>)
endif()
if(DSMM_SANITIZE)
  target_compile_options(dsmm_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:C>:-fsanitize=${DSMM_SANITIZE} -fno-omit-frame-pointer
    -fno-sanitize-recover=all>)
  target_link_options(dsmm_warnings INTERFACE -fsanitize=${DSMM_SANITIZE})
endif()
if(DSMM_COVERAGE)
  target_compile_options(dsmm_warnings INTERFACE $<$<COMPILE_LANGUAGE:C>:--coverage -O0>)
  target_link_options(dsmm_warnings INTERFACE --coverage)
endif()
if(DSMM_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DSMM_FUZZ=ON needs clang (CC=clang)")
  endif()
  target_compile_options(dsmm_warnings INTERFACE $<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link,address,undefined>)
  target_link_options(dsmm_warnings INTERFACE -fsanitize=address,undefined)
endif()
