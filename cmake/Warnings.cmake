# Warnings are on and kept clean for everything weft compiles itself.
function(weft_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wshadow)
endfunction()
