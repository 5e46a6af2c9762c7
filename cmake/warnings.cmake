# The warning set of every compiler this project builds with; TPHEAL_WERROR
# (CMakeLists.txt) makes them errors in the project's own builds only.
if(MSVC)
  add_compile_options(/W4)
  add_compile_definitions(_CRT_SECURE_NO_WARNINGS)
  if(TPHEAL_WERROR)
    add_compile_options(/WX)
  endif()
else()
  add_compile_options(-Wall -Wextra)
  if(TPHEAL_WERROR)
    add_compile_options(-Werror)
  endif()
endif()
