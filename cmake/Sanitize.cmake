# One option away: -DWEFT_SANITIZE=address (ASan + UBSan) or thread (TSan).
# Applied to every target in the tree so the library, the CLI and the tests
# agree on the instrumentation.
if(WEFT_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(WEFT_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT WEFT_SANITIZE STREQUAL "")
  message(FATAL_ERROR "WEFT_SANITIZE must be '', 'address' or 'thread', not '${WEFT_SANITIZE}'")
endif()
