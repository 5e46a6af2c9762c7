# ctest helper: builds TARGET in BUILD_DIR and passes only when the build fails
# AND its output names EXPECT -- a build failing for any other reason (a typo,
# a missing header) must not pass as the designed compile error.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but ${EXPECT} must not exist in this build")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET} failed for another reason than ${EXPECT}:\n${out}${err}")
endif()
message(STATUS "${TARGET}: compile error naming ${EXPECT}, as designed")
