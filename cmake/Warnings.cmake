# One interface target that carries the project's warning and sanitizer flags.
add_library(roofline_warnings INTERFACE)
target_compile_options(roofline_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${ROOFLINE_WERROR}>>:-Werror>)

if(ROOFLINE_SANITIZE)
  target_compile_options(roofline_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(roofline_warnings INTERFACE -fsanitize=address,undefined)
endif()
