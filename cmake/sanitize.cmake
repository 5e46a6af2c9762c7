# TPHEAL_SANITIZE=address: ASan + UBSan, every report fatal.
# TPHEAL_SANITIZE=thread:  TSan, the race build: controlled runs annotate every fiber and
#                          the pool's happens-before contract (docs/races.md).
if(TPHEAL_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
  add_compile_definitions(TPHEAL_ASAN=1)
elseif(TPHEAL_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # TSan finds __tsan_on_finalize with dlsym (harness/sched/sched_race.c: a
  # program whose runs claim their reports keeps its own exit status), which
  # sees only the dynamic symbol table.
  add_link_options(-Wl,--export-dynamic-symbol=__tsan_on_finalize)
  add_compile_definitions(TPHEAL_TSAN=1)
elseif(NOT TPHEAL_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TPHEAL_SANITIZE must be '', address or thread, not '${TPHEAL_SANITIZE}'")
endif()

# tph_no_tsan(<sources>...): in the race build, these sources are not
# instrumented.  The scheduler, the model and the scenario runner order their
# own state with harness-only locks, which give TSan no edge on purpose (the
# model's lock must not order the core's memory), so TSan would call every
# access they make a race.  Calls into the TSan runtime still work from them.
# Directory-scoped, as source properties are: call it where the target is.
function(tph_no_tsan)
  if(TPHEAL_SANITIZE STREQUAL "thread")
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "-fno-sanitize=thread")
  endif()
endfunction()
