# Runs gpufed-replay openb on the tiny fixture with one seed and checks the CSV
# shape: header, then 131 levels per policy with numeric values; also checks the
# placements file header and that bad input exits with status 2.
file(MAKE_DIRECTORY ${OUT})
execute_process(
  COMMAND ${REPLAY} openb --nodes ${DATA}/nodes.csv --pods ${DATA}/pods.csv --seeds 42
          --policies firstfit,fgd,gpufed --format csv --placements ${OUT}/placements.csv
  OUTPUT_VARIABLE csv RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpufed-replay exited with ${rc}")
endif()
string(REPLACE "\n" ";" lines "${csv}")
list(FILTER lines EXCLUDE REGEX "^$")
list(LENGTH lines n)
if(NOT n EQUAL 394)  # 1 header + 3 policies x 131 levels
  message(FATAL_ERROR "expected 394 csv lines, got ${n}")
endif()
list(GET lines 0 header)
if(NOT header STREQUAL "policy,arrived_pct,alloc_pct_mean")
  message(FATAL_ERROR "bad header: ${header}")
endif()
list(REMOVE_AT lines 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^(firstfit|fgd|gpufed),[0-9]+,[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "bad csv row: ${line}")
  endif()
endforeach()
file(STRINGS ${OUT}/placements.csv placements)
list(GET placements 0 pheader)
if(NOT pheader STREQUAL "policy,seed,order,pod,node,gpu_indices,gpu_milli_each")
  message(FATAL_ERROR "bad placements header: ${pheader}")
endif()
execute_process(COMMAND ${REPLAY} openb --nodes ${DATA}/nodes.csv --pods ${DATA}/pods_bad_number.csv
                RESULT_VARIABLE bad_rc ERROR_VARIABLE bad_err OUTPUT_QUIET)
if(NOT bad_rc EQUAL 2 OR NOT bad_err MATCHES "pods_bad_number.csv:3: column 'memory_mib'")
  message(FATAL_ERROR "bad input: exit ${bad_rc}, stderr: ${bad_err}")
endif()
message(STATUS "smoke test passed: ${n} csv lines")
