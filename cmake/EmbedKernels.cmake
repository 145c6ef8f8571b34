# torsh_embed_kernels(<out.cpp> <symbol> <files...>)
# Concatenates kernel sources into one C++ raw string so a backend can compile
# them at run time (OpenCL) while nvcc/hipcc #include the same files.
function(torsh_embed_kernels out symbol)
  set(body "")
  foreach(f IN LISTS ARGN)
    file(READ "${f}" text)
    string(APPEND body "${text}\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${f}")
  endforeach()
  file(WRITE "${out}.tmp" "// Generated from src/backends/gpu/kernels by cmake/EmbedKernels.cmake; do not edit.\nextern const char* const ${symbol};\nconst char* const ${symbol} = R\"TORSH_KERNELS(${body})TORSH_KERNELS\";\n")
  file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
endfunction()
