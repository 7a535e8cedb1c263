# One interface target that carries the project's warning and sanitizer flags.
add_library(roofline_warnings INTERFACE)
target_compile_options(roofline_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${ROOFLINE_WERROR}>>:-Werror>
  # GCC 12 at -O2/-O3 reports std::variant/std::optional copies as maybe-uninitialized
  # (GCC bug 105593 and relatives): false positives that would fail -Werror builds.
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>)

if(ROOFLINE_SANITIZE)
  target_compile_options(roofline_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(roofline_warnings INTERFACE -fsanitize=address,undefined)
endif()

if(ROOFLINE_FUZZ)
  # Coverage instrumentation for everything the harnesses reach; the harnesses link libFuzzer.
  target_compile_options(roofline_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer>)
  target_link_options(roofline_warnings INTERFACE -fsanitize=address,undefined)
endif()
