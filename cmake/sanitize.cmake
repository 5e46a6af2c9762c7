# TPHEAL_SANITIZE=address: ASan + UBSan, every report fatal.
# TPHEAL_SANITIZE=thread:  TSan (free-running mode only: fibers are not TSan-annotated).
if(TPHEAL_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
  add_compile_definitions(TPHEAL_ASAN=1)
elseif(TPHEAL_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  add_compile_definitions(TPHEAL_TSAN=1)
elseif(NOT TPHEAL_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TPHEAL_SANITIZE must be '', address or thread, not '${TPHEAL_SANITIZE}'")
endif()
